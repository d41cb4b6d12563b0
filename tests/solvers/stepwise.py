"""A scheme wrapper without `run`: the base class steps it one step at a time (the reference
for the tests that require a scheme's batched runs to equal single steps bit for bit)."""


class Stepwise:
    def __init__(self, scheme):
        self.scheme = scheme

    def step(self, t, dt_limit):
        return self.scheme.step(t, dt_limit)

    def invalidate(self):
        self.scheme.invalidate()
