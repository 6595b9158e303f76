"""Views: what each experiment (and each reference page) shows, registered by name.

One module per experiment, named like its snippet in `snippets/`: the snippet measures,
the view turns the stored JSON into sections (HTML) and facts (Markdown sentences),
registered with `page.section` and `page.fact`. Every module here is imported by
`page.load_views()`, so adding a file is all it takes. Views never import torch.
"""
