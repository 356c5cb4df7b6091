"""Stub of .stage: schedules.py uses _PipelineStageBase in annotations only."""


class _PipelineStageBase:
    pass
