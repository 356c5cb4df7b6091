"""Imports the schedc Python package from where PYTHONPATH points (the
installed prefix) and checks a generated schedule."""
import schedc

assert "/prefix/" in schedc.__file__, schedc.__file__
print(schedc.verify(schedc.generate("zb-h1", pp=2, microbatches=4)).verdict)
