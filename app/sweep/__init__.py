"""Parameter sweeps (issue 19): `pdestudio sweep MODEL --vary NAME=... --out DIR` runs the
product grid of the varied parameters on Dask distributed and writes, in DIR:

    sweep.json                 the sweep's spec (a rerun with another spec into DIR is refused)
    members/NNNN/final.npz     member NNNN's final state (a checkpoint with its fields and mesh:
                               `solvers.load` and the window open it, and it continues);
                               not with --no-checkpoints
    members/NNNN/thumb.png     its thumbnail (the default field, drawn with NumPy + Pillow);
                               not with --no-thumbnails
    members/NNNN/row.json      its result row, written last and atomically: a member is finished
                               when this file exists (reruns skip it; Ctrl-C keeps it)
    results.parquet            one row per finished member (rebuilt from the row files)
    contact.png                the contact sheet: a labelled thumbnail per member (not with
                               --no-thumbnails)

Columns of results.parquet: member, one column per varied parameter, model, scenario, backend,
dtype, t, steps, wall_s, diverged, reason, checkpoint, thumbnail ("" where not written), gpu
(the GPU the member's worker was pinned to, "" on the CPU), and the model's declared quantities
as `q:NAME` (`describe(model)["quantities"]`).

Several GPUs (runner.py): one worker process per GPU, each pinned to its own (dask-cuda's
LocalCUDACluster where installed, else CUDA_VISIBLE_DEVICES per worker); `--gpus N` uses the
first N. Members that run as ensembles are cut into one task per GPU (64 members on 2 GPUs: 2
tasks of 32; at most 256 a task).

Modules: spec (the grid and its validation), members (what a Dask worker runs: one member, or an
ensemble of members sharing one mesh on a GPU), thumbs (thumbnails and the contact sheet),
results (rows and the table), runner (the cluster, progress, reruns, Ctrl-C). Qt-free: workers
need only pdestudio installed.
"""
