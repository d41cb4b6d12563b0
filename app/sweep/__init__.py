"""Parameter sweeps (issue 19): `pdestudio sweep MODEL --vary NAME=... --out DIR` runs the
product grid of the varied parameters on Dask distributed and writes, in DIR:

    sweep.json                 the sweep's spec (a rerun with another spec into DIR is refused)
    members/NNNN/final.npz     member NNNN's final state (a checkpoint with its fields and mesh:
                               `solvers.load` and the window open it, and it continues)
    members/NNNN/thumb.png     its thumbnail (the default field, drawn with NumPy + Pillow)
    members/NNNN/row.json      its result row, written last and atomically: a member is finished
                               when this file exists (reruns skip it; Ctrl-C keeps it)
    results.parquet            one row per finished member (rebuilt from the row files)
    contact.png                the contact sheet: a labelled thumbnail per member

Columns of results.parquet: member, one column per varied parameter, model, scenario, backend,
dtype, t, steps, wall_s, diverged, reason, checkpoint, thumbnail, and the model's declared
quantities as `q:NAME` (`describe(model)["quantities"]`).

Modules: spec (the grid and its validation), members (what a Dask worker runs: one member, or an
ensemble of members sharing one mesh on a GPU), thumbs (thumbnails and the contact sheet),
results (rows and the table), runner (the cluster, progress, reruns, Ctrl-C). Qt-free: workers
need only pdestudio installed.
"""
