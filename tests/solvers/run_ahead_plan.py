"""The walk the run-ahead GPU tests share (tests/solvers/curvature/, shallow_water/grid/ and
shallow_water/triangles/test_run_ahead.py): two simulations alike, one called with `ahead`, one
without; after each call their states must be equal, and after some calls something happens to
both that must leave the steps started ahead unused (a new field, a paint stroke, a live
parameter, a single step, an advance to an end time, a snapshot stepped from and restored, or a
settle of the one running ahead)."""


def follow(plan, ahead, plain, same, *, field, new_values, paint, param, advance_to):
    """`plan`: (steps of the call, steps started ahead, what happens after it: None, "set_field",
    "paint", "param", "step1", "advance", "snapshot" or "settle"). `same(a, b, where)` asserts
    the two equal; `new_values(plain)` the values set_field gives `field`; `paint`: (centre,
    radius, value) added to `field`; `param`: (name, value); `advance_to(plain)` the end time."""
    for i, (n, m, then) in enumerate(plan):
        ahead.step(n, ahead=m)
        plain.step(n)
        same(ahead, plain, f"call {i}")
        if then == "set_field":
            values = new_values(plain)
            for s in (ahead, plain):
                s.set_field(field, values)
        elif then == "paint":
            for s in (ahead, plain):
                assert s.paint(field, *paint, mode="add") > 0
        elif then == "param":
            for s in (ahead, plain):
                s.set_param(*param)
        elif then == "step1":
            for s in (ahead, plain):
                s.step(1)
        elif then == "advance":
            t_end = advance_to(plain)
            for s in (ahead, plain):
                s.advance(t_end)
        elif then == "snapshot":
            snaps = ahead.snapshot(), plain.snapshot()
            for s, snap in zip((ahead, plain), snaps):
                s.step(2)
                s.restore(snap)
        elif then == "settle":
            ahead.settle()
        elif then is not None:
            raise ValueError(then)
        if then is not None:
            same(ahead, plain, f"after {then} ({i})")
