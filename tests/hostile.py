"""Hostile results files: every free-text field carries HTML, Markdown, attr_list, mathtext or bidi payloads."""

from conftest import add_points, synthetic_doc

HOSTILE = '<script>window.__pwned = 1</script><img src="/pwned.png" onerror="window.__pwned = 2">'
HOSTILE_MARKDOWN = ("![x](http://192.0.2.1/pwned.png){: onerror=alert(document.domain) } "
                    "[click](javascript:alert(1)) $\\alpha$ \u202e61 **bold**")

# The last two imitate the build's own placeholder for untrusted text (one with a nonce-shaped middle).
FORGED_PLACEHOLDERS = ["CROSSOVERTEXT" + "0123456789ABCDEF" * 2 + "01234567" + "TXETREVOSSORC",
                       "CROSSOVERTEXT" + "0123456789ABCDEF" + "0123456789ABCDEF01234567" + "TXETREVOSSORC"]
PAYLOADS = [HOSTILE, HOSTILE_MARKDOWN, "[x](javascript:alert(3)){: .x onclick=alert(4) }",
            "$\\mathrm{x}$ <svg onload=alert(5)>", "\u202eevil\u202c **b**", *FORGED_PLACEHOLDERS]


def poison_every_string(doc: dict) -> dict:
    """Every free-text string field the schema accepts gets a payload (constrained fields stay valid)."""
    from build_hooks import store

    def strings(node, path=()):
        if isinstance(node, dict):
            for key, value in node.items():
                yield from strings(value, (*path, key))
        elif isinstance(node, list):
            for i, value in enumerate(node):
                yield from strings(value, (*path, i))
        elif isinstance(node, str) and "params" not in path:  # params select points; they stay real
            yield path

    for n, path in enumerate(list(strings(doc))):
        *parents, last = path
        holder = doc
        for key in parents:
            holder = holder[key]
        original = holder[last]
        holder[last] = PAYLOADS[n % len(PAYLOADS)]
        try:
            store.validate(doc, "hostile.json")
        except store.ResultsError:
            holder[last] = original  # an enum, pattern or date: the schema already refuses payloads
    return doc


def hostile_doc() -> dict:
    """A GPU machine whose every free-text field carries HTML, Markdown, attr_list, mathtext and bidi payloads."""
    steps = {(d, 32, b): t for b in (1, 64) for d, t in (("cpu", 1e-4 * b), ("cuda", 2e-4))}
    doc = synthetic_doc("hostile-fixture", brand=HOSTILE, gpu=HOSTILE_MARKDOWN, step_times=steps,
                        epoch_times={k: t * 10000 / k[2] for k, t in steps.items()})
    add_points(doc, "transfer", [
        ({"device": "cuda", "direction": "host_to_device", "memory": m, "bytes": n}, n / 1e10, {"bytes": n})
        for m in ("pinned", "pageable") for n in (1024, 2**20)])
    poison_every_string(doc)
    doc["machine_info"]["cpu"]["brand"], doc["machine_info"]["gpu"]["name"] = HOSTILE, HOSTILE_MARKDOWN
    return doc
