import contextlib


@contextlib.contextmanager
def record_function(name):  # runtime only
    yield
