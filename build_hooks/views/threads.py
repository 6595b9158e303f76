"""CPU threads: one thread against all of them, at a small and a large batch."""

from __future__ import annotations

from build_hooks import analysis, consistency, stats, untrusted
from build_hooks.dataset import Dataset
from build_hooks.page import fact, section
from build_hooks.render import (
    Html,
    first_with,
    listing,
    medians_table,
    multiple,
    note,
    si,
    table,
)
from build_hooks.wording import ratio_sentence, same_configuration

GROUP = "threads"
SINGLE_THREAD = "This machine has a single thread to offer, so there is nothing to compare."


@section
def threads(data: Dataset) -> Html:
    """Per machine: step times by batch, width and thread count, and how its all-thread points match
    its training-step experiment."""
    return medians_table(data, GROUP, [("batch", "batch"), ("width", "width"), ("threads", "threads")],
                         after=_same_configuration_note)


def _same_configuration_note(machine) -> Html:
    """One configuration, one number: the all-thread points against the training-step ones."""
    most = max((b["params"]["threads"] for b in machine.measured(GROUP)), default=1)
    pairs = []
    for b in machine.measured(GROUP, threads=most):
        twin = machine.measured(analysis.STEP, device="cpu", batch=b["params"]["batch"], width=b["params"]["width"])
        if twin and most == machine.cpu["threads_used"]:
            pairs.append((b["stats"], twin[0]["stats"]))
    if not pairs:
        return Html("")
    return note(f"The {most}-thread points repeat configurations of the training-step experiment. "
                f"{same_configuration(pairs, machine, [GROUP, analysis.STEP], flagged=True)}.")


def _per_batch(machine) -> tuple[int, list[tuple[int, dict, dict, str, str]], list[tuple]]:
    """One thread against all of them at each batch: (the most threads, rows of (batch, one thread's stats, all
    threads' stats, kind, verdict words), the batches left open). kind is "all", "one", "level" or "twin" (one
    thread beat the training step's trusted time for the all-thread configuration)."""
    took = {(b["params"]["batch"], b["params"]["threads"]): b["stats"] for b in machine.measured(GROUP)}
    most = max(t for _, t in took)
    twins = _trusted_twins(machine)
    rows, open_batches = [], []
    for batch in sorted({b for b, _ in took}):
        one, theirs, twin = took[(batch, 1)], took[(batch, most)], twins.get(batch)
        if twin is None:
            ratio = stats.paired_ratio(one, theirs)
            kind = {1: "all", -1: "one"}.get(ratio.verdict, "level")
            words = ratio_sentence(ratio, f"{most} threads were {{}} faster", "one thread was {} faster", "level")
        elif stats.compare_points(one, twin) < 0:
            # The one-thread point ran in the state that slowed its neighbour and still beat the
            # trusted measurement: a win that survives the doubt.
            kind, words = "twin", (f"one thread was {multiple(twin['median'] / one['median'])} faster even than the "
                                   f"training-step experiment's {si(twin['median'], 's')} for {most} threads")
        else:
            open_batches.append((batch, one, theirs, twin))
            continue
        rows.append((batch, one, theirs, kind, words))
    return most, rows, open_batches


@section
def threads_evidence(data: Dataset) -> Html:
    """One thread against all of them on the first machine measured, a row per batch: both medians and the
    verdict with its interval; under it what "level" means and any batch the consistency checks leave open."""
    machine = first_with(data, GROUP)
    most, rows, open_batches = _per_batch(machine)
    if most == 1:
        return note(SINGLE_THREAD)
    # A one-thread lead over an all-thread point marked ≠ is said not counted in its row, as the sentence under it
    # says (#39 read: the row alone read as a win).
    rejected = {batch for batch, _ in _rejected_all_thread_points(machine)}
    body = [[batch, si(one["median"], "s"), si(theirs["median"], "s"),
             f"{words}; not counted: the {most}-thread point is marked ≠" if kind == "one" and batch in rejected
             else words] for batch, one, theirs, kind, words in rows]
    body += [[batch, si(one["median"], "s"), si(theirs["median"], "s"), "open (≠, below)"]
             for batch, one, theirs, _ in open_batches]
    below = [f"Level: {stats.LEVEL_WORDS}."] if any(kind == "level" for *_, kind, _ in rows) else []
    if open_batches:
        question = _open_question(open_batches, most)
        below.append(question[:1].upper() + question[1:] + ".")
    return (table(["batch", "1 thread", f"{most} threads", "verdict"], sorted(body),
                  caption=f"A step's median time with one thread and with {most}, on {machine.label}")
            + (note(" ".join(below)) if below else Html("")))


@fact
def threads_summary(data: Dataset) -> str:
    """One sentence: at which batches all threads, one thread or neither was faster on the first machine measured,
    and which batches are left open; or that the machine has only one thread."""
    machine = first_with(data, GROUP)
    most, rows, open_batches = _per_batch(machine)
    if most == 1:
        return SINGLE_THREAD
    said = {"all": f"{most} threads were faster", "one": "one thread was faster",
            "twin": "one thread beat even the training step's time", "level": "the two took the same time"}
    parts = []
    for kind in ("all", "one", "twin", "level"):
        batches = [str(batch) for batch, _, _, k, _ in rows if k == kind]
        if batches:
            parts.append(f"{said[kind]} at batch{'es' if len(batches) > 1 else ''} {listing(batches)}")
    if open_batches:
        plural = len(open_batches) > 1
        parts.append(f"batch{'es' if plural else ''} {listing([str(b) for b, *_ in open_batches])} "
                     f"{'are' if plural else 'is'} left open")
    return f"On {untrusted.placeholder(machine.label)}, " + "; ".join(parts) + "."


def _open_question(batches: list[tuple], most: int) -> str:
    """The batches where the all-thread point is rejected and one thread does not beat its
    trusted stand-in: the experiment's points may come from different states, so nothing is concluded."""
    names = listing([str(batch) for batch, *_ in batches])
    pairs = listing([f"{si(theirs['median'], 's')} against {si(twin['median'], 's')}"
                     for _, _, theirs, twin in batches])
    ones = listing([si(one["median"], "s") for _, one, _, _ in batches])
    plural = len(batches) > 1
    return (f"at batch {names} the {most}-thread point{'s' if plural else ''} disagree{'' if plural else 's'} with "
            f"the training-step experiment's faster measurement{'s' if plural else ''} of the same configuration "
            f"({pairs}; About the data). The machine changed state during this experiment. Its points may come "
            f"from different states, so it cannot say which is faster there. One thread ({ones}) would count only "
            "by beating the training step's time, the likelier one since interference only slows a run. "
            f"{'One thread does not beat it' if not plural else 'One thread does not beat it at any of them'}")


def _trusted_twins(machine) -> dict[int, dict]:
    """{batch: the training step's stats for the all-thread configuration} wherever the consistency
    check rejects the threads experiment's own point as the slower of the two (interference only
    slows a run, so the faster is the likelier)."""
    most = max(b["params"]["threads"] for b in machine.measured(GROUP))
    rejected = _rejected_all_thread_points(machine)
    twins = {}
    for point in machine.measured(GROUP, threads=most):
        batch, width = point["params"]["batch"], point["params"]["width"]
        twin = (machine.measured(analysis.STEP, device="cpu", batch=batch, width=width)
                if (batch, width) in rejected else [])
        if twin and twin[0]["stats"]["median"] < point["stats"]["median"]:
            twins[batch] = twin[0]["stats"]
    return twins


def _one_thread_leads(machine) -> tuple[list[int], dict[int, dict], list[int]]:
    """Where one thread beat all threads on `machine` beyond the spread: (batches by the threads experiment's own
    paired rounds, batches won against the training step's trusted twin {batch: its stats}, batches whose lead
    is not counted because their all-thread point disagrees with its twin)."""
    took = {(b["params"]["batch"], b["params"]["threads"]): b for b in machine.measured(GROUP)}
    most = max(t for _, t in took)
    if most <= 1:
        return [], {}, []
    batches = [batch for batch in sorted({b for b, _ in took})
               if stats.paired_ratio(took[(batch, 1)]["stats"], took[(batch, most)]["stats"]).verdict < 0]
    rejected = _rejected_all_thread_points(machine)
    trusted = [b for b in batches if (b, took[(b, most)]["params"]["width"]) not in rejected]
    # Where the all-thread point is rejected, the training step's measurement of the same
    # configuration stands in for it: one thread may still beat that beyond both spreads.
    by_twin = {b: twin for b, twin in sorted(_trusted_twins(machine).items())
               if stats.compare_points(took[(b, 1)]["stats"], twin) < 0}
    return trusted, by_twin, [b for b in batches if b not in trusted and b not in by_twin]


def _one_thread_time(machine, batch: int) -> float:
    return next(b["stats"]["median"] for b in machine.measured(GROUP, threads=1, batch=batch))


def _all_thread_time(machine, batch: int) -> float:
    """The threads experiment's own median at this batch on the most threads it ran."""
    points = machine.measured(GROUP, batch=batch)
    return max(points, key=lambda b: b["params"]["threads"])["stats"]["median"]


@fact
def one_thread_wins(data: Dataset) -> str:
    """For the machines a lesson page draws (dataset.shown: fifty committed files must not make fifty
    sentences): where one thread beat all threads beyond the spread, at which batches (or that it never did)."""
    found, doubted, stood_in = [], [], False
    for machine in data.shown(GROUP):
        trusted, by_twin, uncounted = _one_thread_leads(machine)
        name = untrusted.placeholder(machine.label)
        if trusted:
            found.append(f"on {name} at batch {listing([str(b) for b in trusted])}")
        if by_twin:
            stood_in = True
            found.append(f"on {name} at batch " + listing([
                f"{b} ({si(_one_thread_time(machine, b), 's')}, against {si(twin['median'], 's')} for all threads "
                f"in the training-step experiment)" for b, twin in by_twin.items()]))
        if uncounted:
            doubted.append(f"on {name} at batch {listing([str(b) for b in uncounted])}")
    # Short sentences, one place each (#39): the table above gives every batch's figures.
    # Scoped to the machines drawn: another machine in the data may differ (the FAQ counts them all).
    drawn = listing([f"the {untrusted.placeholder(m.cpu_short_name)}" for m in data.shown(GROUP)])
    text = (". ".join([f"One thread beat all threads {where}" for where in found]) if found else
            f"On {drawn}, no trusted comparison found one thread faster than all threads")
    if stood_in:  # the stand-in is one of a pair marked ≠: say why it may still be compared with
        text += (". There the threads experiment's own all-thread point is marked ≠. The faster timing stands in, "
                 "since interference only ever slows a run")
    if doubted:
        text += (". One thread also led its paired rounds " + listing(doubted) + ". But the all-thread point there "
                 "is marked ≠, so that lead is not counted")
    return text


@fact
def one_thread_answer(data: Dataset) -> str:
    """The FAQ's measured answer, in a few words: the machines and batches where one thread beat all threads in a
    comparison the consistency checks trust, or that it never did. Every machine in the build's data counts ("not
    in this build's data" must hold for all of it), and the first three are named."""
    wins, twins, doubted, trusted_any, apart = [], [], [], False, []
    for machine in data.with_experiment(GROUP):
        trusted, by_twin, uncounted = _one_thread_leads(machine)
        trusted_any = trusted_any or bool(trusted)
        name = untrusted.placeholder(machine.label)
        if trusted:
            wins.append(f"{name} at batch {listing([str(b) for b in sorted({*trusted, *by_twin})])}")
        elif by_twin:  # the first one's times follow in the answer, the same run's first
            wins.append(f"{name} at batch {listing([str(b) for b in sorted(by_twin)])}")
        if by_twin:  # its own all-thread point disagreed with the training step's: the comparison says which it used
            twins.append(name)
            apart.append((machine, *next(iter(by_twin.items()))))
        if uncounted:
            doubted.append(untrusted.placeholder(machine.label))
    if wins:
        more = f", and {len(wins) - 3} more machines (gallery)" if len(wins) > 3 else ""
        machines = f"{len(wins)} machine{'s' if len(wins) > 1 else ''}"
        # Which all-thread time a comparison used is said apart, so the list stays readable.
        # Plain words, no mark: the FAQ, where this appears, has no key for ≠.
        if not trusted_any:  # every yes compares two experiments: the answer says so first (#39 review)
            machine, batch, twin = apart[0]
            # The same run first, then the other run's all-thread time, then the doubt (#39 reads).
            return (f"Possibly, on {machines} in this build's data: {listing(wins[:3])}{more}. In its threads run, "
                    f"one thread took {si(_one_thread_time(machine, batch), 's')} at batch {batch} and all threads "
                    f"{si(_all_thread_time(machine, batch), 's')}. The training-step run timed all threads at "
                    f"{si(twin['median'], 's')}. With the two runs at odds, treat it as unproven")
        used = (f". For {listing(twins)}, the all-thread time comes from the training-step experiment. Its own "
                "all-thread run disagreed with that one, so it was set aside" if twins else "")
        return f"Yes, on {machines} in this build's data: {listing(wins[:3])}{more}{used}"
    # A lead the consistency check does not trust is neither a yes nor a plain no: say it was seen and set aside.
    if doubted:
        return (f"Not in a comparison this build trusts. On {listing(doubted)}, one thread did lead, but against an "
                "all-thread point marked ≠, so that lead is not counted")
    return "Not in this build's data, beyond the spread"


def _rejected_all_thread_points(machine) -> set[tuple[int, int]]:
    """(batch, width) of the all-thread points the consistency check (About the data) finds in
    disagreement with the training-step experiment's measurement of the same configuration."""
    return {(c.batch, c.width) for c in consistency.checks(machine) if c.kind == "threads" and not c.agrees}
