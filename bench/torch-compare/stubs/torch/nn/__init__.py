class Module:  # isinstance target; fake stages use submod=None, so never matched
    def modules(self):
        yield self


from . import modules  # noqa: E402,F401
