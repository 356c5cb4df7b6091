"""Reading a JSON runtime plan into records the executor runs.

The executor checks what it needs to run a plan (ops, fields, groups); it
does not re-verify the schedule: that is schedc verify's job, and a plan
that is wrong in a way the verifier would catch shows up here as a
deadlock, an instruction that cannot run, or gradients that differ.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from schedc_torch import strict_json

PLAN_FORMAT = "schedc-runtime-plan"
PLAN_VERSION = 1
# The versions the executor reads: 2 adds communicators (a group's
# "creation", a transfer's "communicator"), 3 streams and events, 4 shape
# exchanges (a transfer's "payload": "shape"). It runs a rank's
# instructions one at a time in plan order, which keeps every stream's
# order and every event's; a lazy communicator is created (a barrier of its
# members) at its first use; a shape exchange sends the tensor's shape, and
# the data receive after it allocates its buffer from the shape received.
PLAN_VERSIONS = (1, 2, 3, 4)
# What a transfer's "payload" may say.
PAYLOADS = ("data", "shape")

COMPUTE_OPS = ("forward", "backward", "backward_input", "backward_weight")
TRANSFER_OPS = ("send", "recv")
COLLECTIVE_OPS = ("all_reduce", "reduce_scatter", "all_gather", "all_to_all",
                  "barrier")
STAGE_OPS = ("unshard", "reshard", "reduce_grad")
ALL_OPS = COMPUTE_OPS + TRANSFER_OPS + COLLECTIVE_OPS + STAGE_OPS + (
    "optimizer_step",)


# The ops each instruction key belongs to (docs/runtime-plan.md).
INSTRUCTION_KEYS = {
    "op": ALL_OPS,
    "stage": COMPUTE_OPS + TRANSFER_OPS + COLLECTIVE_OPS + STAGE_OPS,
    "microbatch": COMPUTE_OPS + TRANSFER_OPS,
    "direction": TRANSFER_OPS,
    "peer": TRANSFER_OPS,
    "group": COLLECTIVE_OPS,
    "bytes": TRANSFER_OPS + COLLECTIVE_OPS,
    "declaration": COLLECTIVE_OPS,
    "p2p_group": TRANSFER_OPS,
    "overlap": COMPUTE_OPS,
    # A layerwise overlap changes memory, not what runs: the executor runs
    # the pair one after the other either way.
    "layerwise": COMPUTE_OPS,
    "communicator": TRANSFER_OPS,
    "payload": TRANSFER_OPS,
    "stream": ALL_OPS,
    "wait_event": ALL_OPS,
    "record_event": ALL_OPS,
    "slot": ALL_OPS,
    "recv_slot": ALL_OPS,
}


# What the executor runs (docs/limits.md): it forks a process per rank and
# replica on one machine and replays the step unpipelined in one process,
# so the plan's counts are its cost; a plan past these is refused before
# any process starts.
MAX_PLAN_BYTES = 64 << 20
MAX_PROCESSES = 256
MAX_MICROBATCHES = 1 << 16
MAX_STAGES = 1 << 10
# A collective moves at most this much: the executor checks the order of
# the collectives, not their bandwidth ("bytes" was allocated literally).
MAX_COLLECTIVE_PAYLOAD = 1 << 20
# The largest "bytes" the schema takes (an int64 the IR holds).
MAX_BYTES = (1 << 62) - 1
# Integers of a plan fit in an int64: 19 digits and a sign.
MAX_INTEGER_DIGITS = 20
# The largest buffer slot index the verifier's reader takes (kMaxIndex in
# lib/Import/JsonPlan.cpp).
MAX_SLOT = 1 << 40

# When a declared collective runs (docs/runtime-plan.md; the schema's
# "when").
COLLECTIVE_TIMINGS = ("before_forward", "after_forward", "before_backward",
                      "after_backward", "step")
# The keys of a collective declaration (the schema's, all required but
# "stage").
DECLARATION_KEYS = ("kind", "group", "bytes", "when", "stage")

# The mesh axes of data parallelism (docs/runtime-plan.md, "Data
# parallelism"; lib/Schedule/DataParallelAxes.h): one axis `dp`, or hybrid
# sharding as `dp_replicate` x `dp_shard`, outermost first.
DATA_PARALLEL_AXIS = "dp"
SHARD_AXIS = "dp_shard"
REPLICATE_AXIS = "dp_replicate"


class PlanError(Exception):
    """The plan cannot be read, or the executor cannot run it."""


@dataclass(frozen=True)
class Instruction:
    """One instruction of a rank, as the plan says it."""
    op: str
    stage: int = -1
    microbatch: int = -1
    direction: str = ""
    peer: int = -1
    group: str = ""
    bytes: int = -1
    p2p_group: int = -1
    overlap: int = -1
    # The index of the declaration (the plan's "collectives") a collective
    # fulfils, when the plan names it; -1 when it names none.
    declaration: int = -1
    # A transfer's communicator: the group it runs on, "" for the rank
    # pair's own.
    communicator: str = ""
    # A transfer's payload: "data", or "shape" for its shape exchange.
    payload: str = "data"

    def describe(self) -> str:
        """A short description for messages: 'send forward stage 0 mb 1 to
        rank 1'."""
        if self.op in TRANSFER_OPS:
            where = "to" if self.op == "send" else "from"
            shape = "shape " if self.payload == "shape" else ""
            return (f"{self.op} {shape}{self.direction} stage {self.stage} "
                    f"mb {self.microbatch} {where} rank {self.peer}")
        if self.op in COMPUTE_OPS:
            return f"{self.op} stage {self.stage} mb {self.microbatch}"
        if self.op in COLLECTIVE_OPS:
            text = f"{self.op} @{self.group}"
            return text + (f" stage {self.stage}" if self.stage >= 0 else "")
        if self.op in STAGE_OPS:
            return f"{self.op} stage {self.stage}"
        return self.op


@dataclass(frozen=True)
class Declaration:
    """A declared collective: `when` after_backward on all_reduce or
    reduce_scatter marks a gradient reduction."""
    kind: str
    group: str
    when: str
    stage: int
    bytes: int = -1


@dataclass
class Plan:
    """A plan: shape, groups and every rank's instructions."""
    name: str
    stages: int
    microbatches: int
    replicas: int
    data_parallel: int
    verified: bool
    p2p: str
    rank_ids: List[int]
    programs: List[List[Instruction]]
    groups: Dict[str, List[List[int]]] = field(default_factory=dict)
    declarations: List[Declaration] = field(default_factory=list)
    # Hybrid sharding: the replicas of one shard group (the mesh's dp_shard
    # axis; replica d is in shard group d // S at position d % S); 0
    # without it.
    shard_group_size: int = 0
    # Stages whose auxiliary loss is computed over the global batch (the
    # plan's aux heads of scope global_batch); the executor computes it.
    global_aux_stages: List[int] = field(default_factory=list)
    # Groups created at their first use ("creation": "lazy").
    lazy_groups: List[str] = field(default_factory=list)

    @property
    def stages_per_replica(self) -> int:
        return self.stages // self.replicas

    def model_stage(self, stage: int) -> int:
        """The model stage a (replica's) stage computes."""
        return stage % self.stages_per_replica

    def is_first_stage(self, stage: int) -> bool:
        return stage % self.stages_per_replica == 0

    def is_last_stage(self, stage: int) -> bool:
        per = self.stages_per_replica
        return stage % per == per - 1

    def replicas_of(self, group: str, replica: int) -> List[int]:
        """The data-parallel replicas a collective of `group` issued in
        `replica` joins: every one for dp, the replicas of its shard group
        for dp_shard, its position in every shard group for dp_replicate,
        itself for any other group."""
        if group == DATA_PARALLEL_AXIS:
            return list(range(self.data_parallel))
        size = self.shard_group_size
        if group == SHARD_AXIS and size > 0:
            first = replica - replica % size
            return list(range(first, first + size))
        if group == REPLICATE_AXIS and size > 0:
            return list(range(replica % size, self.data_parallel, size))
        return [replica]

    def index_of(self, rank_id: int) -> int:
        """The position of rank `rank_id` in the plan."""
        return self.rank_ids.index(rank_id)

    def reduces_gradients(self, ins: Instruction) -> bool:
        """Whether a collective instruction is a declared gradient reduction
        (all_reduce or reduce_scatter, when after_backward): the declaration
        it names, or else any declaration its kind and group fit."""
        if ins.op not in ("all_reduce", "reduce_scatter"):
            return False
        if ins.declaration >= 0:
            return self.declarations[ins.declaration].when == "after_backward"
        return any(d.kind == ins.op and d.group == ins.group and
                   d.when == "after_backward" and
                   (d.stage < 0 or d.stage == ins.stage)
                   for d in self.declarations)


def _int(obj: dict, key: str, where: str, default: Optional[int] = None,
         low: int = 0, high: Optional[int] = None, why: str = "") -> int:
    value = obj.get(key, default)
    if value is None:
        raise PlanError(f"{where}: \"{key}\" is missing")
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise PlanError(f"{where}: \"{key}\" must be an integer >= {low}")
    if high is not None and value > high:
        raise PlanError(f"{where}: \"{key}\" is {value}; at most {high}"
                        + (f" ({why})" if why else ""))
    return value


def _list(obj: dict, key: str, where: str) -> list:
    """An optional array field; [] when absent."""
    value = obj.get(key, [])
    if not isinstance(value, list):
        raise PlanError(f"{where}: \"{key}\" must be an array, not "
                        f"{type(value).__name__}")
    return value


def _instruction(obj: object, where: str, groups: Dict[str, list],
                 rank_ids: List[int], stages: int,
                 microbatches: int, version: int = 1) -> Instruction:
    if not isinstance(obj, dict):
        raise PlanError(f"{where}: an instruction must be an object")
    op = obj.get("op")
    if op not in ALL_OPS:
        raise PlanError(f"{where}: unknown op {op!r}")
    for key in obj:
        if key not in INSTRUCTION_KEYS:
            raise PlanError(f"{where}: unknown key {key!r}")
        if op not in INSTRUCTION_KEYS[key]:
            raise PlanError(f"{where}: a {op} has no {key!r}")
        needs = {"communicator": 2, "wait_event": 3, "record_event": 3,
                 "payload": 4}
        if version < needs.get(key, 1):
            raise PlanError(f"{where}: {key!r} needs plan version "
                            f"{needs[key]}; this plan is version {version}")
    communicator = obj.get("communicator", "")
    if "communicator" in obj and communicator not in groups:
        raise PlanError(f"{where}: communicator {_clip(communicator)} is "
                        f"not a declared group")
    stage = -1
    if op != "optimizer_step":
        optional = op in COLLECTIVE_OPS
        stage = _int(obj, "stage", where, -1 if optional else None,
                     low=-1 if optional else 0, high=stages - 1,
                     why=f"the plan has {stages} stages")
    microbatch = -1
    direction = ""
    peer = -1
    group = ""
    if op in COMPUTE_OPS or op in TRANSFER_OPS:
        microbatch = _int(obj, "microbatch", where, high=microbatches - 1,
                          why=f"the plan has {microbatches} microbatches")
    if op in TRANSFER_OPS:
        direction = obj.get("direction")
        if direction not in ("forward", "backward"):
            raise PlanError(f"{where}: \"direction\" must be forward or "
                            f"backward")
        peer = _int(obj, "peer", where)
        if peer not in rank_ids:
            raise PlanError(f"{where}: peer {peer} is no rank of the plan")
    if op in COLLECTIVE_OPS:
        group = obj.get("group")
        if not isinstance(group, str) or group not in groups:
            raise PlanError(f"{where}: group {group!r} is not declared")
    payload = obj.get("payload", "data")
    if payload not in PAYLOADS:
        raise PlanError(f"{where}: \"payload\" must be data or shape")
    _check_stream_and_slots(obj, op, where, version)
    return Instruction(op=op, stage=stage, microbatch=microbatch,
                       communicator=communicator, payload=payload,
                       direction=direction, peer=peer, group=group,
                       bytes=_int(obj, "bytes", where, -1, low=-1,
                                  high=MAX_BYTES, why="an int64"),
                       p2p_group=_int(obj, "p2p_group", where, -1, low=-1,
                                      high=MAX_BYTES, why="an int64"),
                       overlap=_int(obj, "overlap", where, -1, low=-1,
                                    high=MAX_BYTES, why="an int64"),
                       declaration=_int(obj, "declaration", where, -1,
                                        low=-1))


def _check_stream_and_slots(obj: dict, op: str, where: str,
                            version: int = 1) -> None:
    """"stream" is the one the op runs on (compute for computation and the
    optimizer step, comm for the rest) and "slot", "recv_slot" are buffer
    indices, as the verifier's reader and the schema check them: the
    executor said PASS on "slot": [] and "stream": "replicas"."""
    expected = "compute" if op in COMPUTE_OPS or op == "optimizer_step" \
        else "comm"
    stream = obj.get("stream", expected)
    if version >= 3:
        # Any stream of the rank; events name CUDA events.
        for key in ("stream", "wait_event", "record_event"):
            if key in obj and (not isinstance(obj[key], str) or
                               not obj[key]):
                raise PlanError(f"{where}: \"{key}\" must be a non-empty "
                                f"string, not {_clip(obj[key])}")
    elif stream != expected:
        raise PlanError(f"{where}: a {op} runs on the {expected} stream, "
                        f"not {_clip(stream)}")
    for key in ("slot", "recv_slot"):
        if key in obj:
            _int(obj, key, where, low=0, high=MAX_SLOT,
                 why="a buffer slot index")


def _clip(value: object) -> str:
    """`value` as a message quotes it: its repr, at most 80 characters."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _declaration(obj: object, k: int, groups: Dict[str, list],
                 stages: int) -> Declaration:
    """A collective declaration, checked as the verifier's reader checks
    it: its keys, a known kind and "when", a declared group, bytes and
    stage in range. An unknown kind made a worker abort inside gloo, an
    unknown "when" results that differ."""
    where = f"collectives[{k}]"
    if not isinstance(obj, dict):
        raise PlanError(f"{where}: must be an object")
    for key in obj:
        if key not in DECLARATION_KEYS:
            raise PlanError(f"{where}: unknown key {_clip(key)}")
    for key in ("kind", "group", "when"):
        if not isinstance(obj.get(key), str):
            raise PlanError(f"{where}: \"{key}\" must be a string")
    if obj["kind"] not in COLLECTIVE_OPS:
        raise PlanError(f"{where}: unknown collective kind "
                        f"{_clip(obj['kind'])}; expected "
                        f"{', '.join(COLLECTIVE_OPS)}")
    if obj["when"] not in COLLECTIVE_TIMINGS:
        raise PlanError(f"{where}: unknown \"when\" {_clip(obj['when'])}; "
                        f"expected {', '.join(COLLECTIVE_TIMINGS)}")
    if obj["group"] not in groups:
        raise PlanError(f"{where}: names group {_clip(obj['group'])}, which "
                        f"the plan does not declare")
    return Declaration(
        kind=obj["kind"], group=obj["group"], when=obj["when"],
        stage=_int(obj, "stage", where, -1, low=0, high=stages - 1,
                   why=f"the plan has {stages} stages")
        if "stage" in obj else -1,
        bytes=_int(obj, "bytes", where, low=0, high=MAX_BYTES,
                   why="an int64"))


def _mesh_error(axes: List[Tuple[str, int]]) -> str:
    """Why mesh `axes` (name, size) do not describe data parallelism
    consistently, or "": dp_shard and dp_replicate come together, in that
    order, and never beside dp (the C++ reader's words)."""
    names = [name for name, _ in axes]
    shard = names.index(SHARD_AXIS) if SHARD_AXIS in names else -1
    replicate = names.index(REPLICATE_AXIS) if REPLICATE_AXIS in names else -1
    if (shard < 0) != (replicate < 0):
        has, lacks = ((REPLICATE_AXIS, SHARD_AXIS) if shard < 0 else
                      (SHARD_AXIS, REPLICATE_AXIS))
        return (f"has axis '{has}' without '{lacks}': hybrid sharding needs "
                f"both")
    if shard >= 0 and DATA_PARALLEL_AXIS in names:
        return ("has axes 'dp' and 'dp_shard' x 'dp_replicate': data "
                "parallelism is one or the other")
    if shard >= 0 and replicate > shard:
        return ("names 'dp_shard' before 'dp_replicate': the replicas of one "
                "shard group are consecutive, so 'dp_replicate' is outer")
    return ""


def _shard_group_size(data: dict, dp: int) -> int:
    """The dp_shard size of the plan's mesh (0 without hybrid sharding),
    checked as the C++ reader checks it: the axes are consistent and
    dp_replicate x dp_shard is "data_parallel"."""
    axes = []
    for k, axis in enumerate(_list(data, "mesh", "plan")):
        where = f"mesh[{k}]"
        if not isinstance(axis, dict) or \
                not isinstance(axis.get("axis"), str):
            raise PlanError(f"{where}: must be an object {{\"axis\", "
                            f"\"size\"}}")
        axes.append((axis["axis"], _int(axis, "size", where, low=1,
                                        high=MAX_BYTES, why="an int64")))
    why = _mesh_error(axes)
    if why:
        raise PlanError(f"mesh: {why}")
    sizes = dict(axes)
    if SHARD_AXIS not in sizes:
        return 0
    shard, replicate = sizes[SHARD_AXIS], sizes[REPLICATE_AXIS]
    if shard * replicate != dp:
        raise PlanError(f"mesh: 'dp_replicate' x 'dp_shard' is {replicate} "
                        f"x {shard}, but \"data_parallel\" is {dp}")
    return shard


def _check_declaration(ins: Instruction, declarations: List[Declaration],
                       where: str) -> None:
    """A named declaration exists and explains the instruction (its kind
    and group, and its stage and bytes where both name them)."""
    if ins.declaration < 0:
        return
    if ins.declaration >= len(declarations):
        raise PlanError(f"{where}: \"declaration\" is {ins.declaration}, but "
                        f"the plan declares {len(declarations)} collective(s)")
    d = declarations[ins.declaration]
    if d.kind != ins.op or d.group != ins.group or \
            (d.stage >= 0 and d.stage != ins.stage) or \
            (ins.bytes >= 0 and d.bytes >= 0 and ins.bytes != d.bytes):
        raise PlanError(f"{where}: \"declaration\" {ins.declaration} "
                        f"({d.kind} on group {d.group!r}, {d.when}) does not "
                        f"explain this {ins.op}")


def parse_plan(data: object) -> Plan:
    """Checks a decoded plan and returns its records."""
    if not isinstance(data, dict):
        raise PlanError("the top level must be a JSON object")
    if data.get("format") != PLAN_FORMAT:
        raise PlanError(f"\"format\" must be {PLAN_FORMAT!r}")
    version = data.get("version")
    if version not in PLAN_VERSIONS or isinstance(version, bool):
        raise PlanError(f"unsupported plan version {version!r}; this "
                        f"executor runs versions {PLAN_VERSIONS[0]} to "
                        f"{PLAN_VERSIONS[-1]}")
    stages = _int(data, "stages", "plan", low=1, high=MAX_STAGES,
                  why="the stages the executor runs")
    microbatches = _int(data, "microbatches", "plan", low=1)
    replicas = _int(data, "replicas", "plan", 1, low=1, high=stages,
                    why="one stage per replica at least")
    dp = _int(data, "data_parallel", "plan", 1, low=1, high=MAX_PROCESSES,
              why="the executor starts a process per rank and replica")
    if stages % replicas or microbatches % replicas:
        raise PlanError(f"{replicas} replicas do not divide {stages} stages "
                        f"and {microbatches} microbatches")
    # The reference replays every microbatch of every replica.
    if microbatches * dp > MAX_MICROBATCHES:
        raise PlanError(f"{microbatches} microbatches x data_parallel {dp} "
                        f"is more than the {MAX_MICROBATCHES} the executor "
                        f"runs")
    ranks = data.get("ranks")
    if not isinstance(ranks, list) or not ranks:
        raise PlanError("\"ranks\" must be a non-empty array")
    if len(ranks) * dp > MAX_PROCESSES:
        raise PlanError(f"{len(ranks)} ranks x data_parallel {dp} is "
                        f"{len(ranks) * dp} processes, more than the "
                        f"{MAX_PROCESSES} the executor starts")
    rank_ids = [_int(r, "rank", f"ranks[{k}]") if isinstance(r, dict) else
                -1 for k, r in enumerate(ranks)]
    if len(set(rank_ids)) != len(rank_ids) or -1 in rank_ids:
        raise PlanError("rank ids must be distinct integers >= 0")
    shard_group_size = _shard_group_size(data, dp)
    groups: Dict[str, List[List[int]]] = {}
    lazy_groups: List[str] = []
    for k, g in enumerate(_list(data, "groups", "plan")):
        if not isinstance(g, dict) or not isinstance(g.get("name"), str):
            raise PlanError(f"groups[{k}]: must be {{\"name\", \"members\"}}")
        if g["name"] in (SHARD_AXIS, REPLICATE_AXIS) and not shard_group_size:
            raise PlanError(f"groups[{k}]: group '{g['name']}' spans the "
                            f"replicas along the mesh axis '{g['name']}', "
                            f"but the mesh has none")
        members = g.get("members")
        if not isinstance(members, list) or not all(
                isinstance(s, list) and all(m in rank_ids for m in s)
                for s in members):
            raise PlanError(f"groups[{k}]: members must be lists of rank ids")
        groups[g["name"]] = members
        creation = g.get("creation", "eager")
        if "creation" in g and version < 2 or \
                creation not in ("eager", "lazy"):
            raise PlanError(f"groups[{k}]: \"creation\" must be eager or "
                            f"lazy, in a plan of version 2 or later")
        if creation == "lazy":
            lazy_groups.append(g["name"])
    declarations = [_declaration(d, k, groups, stages) for k, d in
                    enumerate(_list(data, "collectives", "plan"))]
    programs = []
    for r, rank in enumerate(ranks):
        instructions = rank.get("instructions")
        if not isinstance(instructions, list):
            raise PlanError(f"ranks[{r}]: \"instructions\" must be an array")
        programs.append([
            _instruction(obj, f"ranks[{r}].instructions[{i}]", groups,
                         rank_ids, stages, microbatches, version)
            for i, obj in enumerate(instructions)])
    for r, program in enumerate(programs):
        for i, ins in enumerate(program):
            _check_declaration(ins, declarations,
                               f"ranks[{r}].instructions[{i}]")
    global_aux = []
    for k, h in enumerate(_list(data, "aux_heads", "plan")):
        if not isinstance(h, dict) or not isinstance(h.get("stage"), int) \
                or not 0 <= h["stage"] < stages:
            raise PlanError(f"aux_heads[{k}]: \"stage\" must be a stage of "
                            f"the plan")
        if h.get("scope") == "global_batch":
            global_aux.append(h["stage"])
    verdict = data.get("verdict") or {}
    if not isinstance(verdict, dict):
        raise PlanError(f"\"verdict\" must be an object, not "
                        f"{type(verdict).__name__}")
    # Each microbatch of a replica runs forward through its stages: a plan
    # that declares more microbatches than its forwards cover would only
    # make the reference long (2^26 from a 252-byte plan).
    forwards = sum(1 for program in programs for ins in program
                   if ins.op == "forward")
    if forwards < (stages // replicas) * microbatches:
        raise PlanError(f"the plan declares {microbatches} microbatches "
                        f"through {stages // replicas} stages but runs "
                        f"{forwards} forwards")
    return Plan(name=str(data.get("name", "plan")), stages=stages,
                microbatches=microbatches, replicas=replicas,
                data_parallel=dp, verified=verdict.get("status") == "verified",
                p2p=str(verdict.get("p2p", "rendezvous")), rank_ids=rank_ids,
                programs=programs, groups=groups, declarations=declarations,
                shard_group_size=shard_group_size,
                global_aux_stages=global_aux, lazy_groups=lazy_groups)


def _parse_int(text: str) -> int:
    # Before int(): Python refuses 4,300 digits and more with a ValueError
    # of its own, and a plan's integers are int64s.
    if len(text) > MAX_INTEGER_DIGITS:
        raise PlanError(f"a number of {len(text)} digits; the integers of a "
                        f"plan have at most {MAX_INTEGER_DIGITS}")
    return int(text)


def _parse_constant(name: str) -> float:
    raise PlanError(f"{name} is not JSON")


def decode_plan(raw: bytes, path: str) -> object:
    """The JSON value of plan file `raw`; PlanError when it is too big, not
    UTF-8, malformed or nested past what the decoder recurses through."""
    if len(raw) > MAX_PLAN_BYTES:
        raise PlanError(f"{path}: more than the {MAX_PLAN_BYTES} bytes of "
                        f"a plan the executor runs")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise PlanError(f"{path}: not UTF-8 (byte {e.start})") from None
    try:
        return strict_json.loads(text, parse_int=_parse_int,
                                 parse_constant=_parse_constant)
    except strict_json.DuplicateKeyError as e:
        where = f"{path}:{e.line}:{e.column}" if e.line else path
        raise PlanError(f"{where}: malformed plan: {e.what}") from None
    except json.JSONDecodeError as e:
        raise PlanError(f"{path}:{e.lineno}:{e.colno}: malformed JSON: "
                        f"{e.msg}") from None
    except RecursionError:
        raise PlanError(f"{path}: nested too deep (plans nest fewer than "
                        f"ten levels)") from None


def load_plan(path: str) -> Plan:
    """Reads the plan at `path`; raises PlanError when it cannot."""
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_PLAN_BYTES + 1)
    except OSError as e:
        raise PlanError(f"cannot read {path!r}: {e.strerror}") from None
    return parse_plan(decode_plan(raw, path))


def bundles(program: List[Instruction]) -> List[Tuple[int, int]]:
    """The runs [begin, end) of a program that issue together: a p2p group
    or an overlap; a lone instruction is a run of one."""
    runs = []
    i = 0
    while i < len(program):
        ins = program[i]
        key = ("p2p", ins.p2p_group) if ins.p2p_group >= 0 else (
            ("overlap", ins.overlap) if ins.overlap >= 0 else None)
        end = i + 1
        while key is not None and end < len(program):
            nxt = program[end]
            nkey = ("p2p", nxt.p2p_group) if nxt.p2p_group >= 0 else (
                ("overlap", nxt.overlap) if nxt.overlap >= 0 else None)
            if nkey != key:
                break
            end += 1
        runs.append((i, end))
        i = end
    return runs
