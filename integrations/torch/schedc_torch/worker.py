"""One process of a plan's run: executes one rank's instructions for real.

Process g runs plan rank g % R (R ranks in the plan) in data-parallel
replica g // R. Transfers are torch.distributed send/recv (a p2p group is
one batch_isend_irecv), computes are autograd on the rank's stage modules
(I and W split the backward with torch.autograd.grad), collectives run on
process groups made from the plan's groups, FSDP stages keep a shard of
their parameters between UNSHARD and RESHARD.
"""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Dict, List, Optional, Tuple

import torch
import torch.distributed as dist

from .models import (AUX_WEIGHT, HIDDEN, LEARNING_RATE, ModelSpec, aux_loss,
                     aux_statistic, loss_fn, make_stage, microbatch)
from .plan import (COMPUTE_OPS, MAX_COLLECTIVE_PAYLOAD, Instruction, Plan,
                   PlanError, bundles)

# The torch calls a collective makes (a reduce_scatter runs as an
# all_reduce), by the code RankExecutor._agree exchanges.
AGREED_CALLS = ("all_reduce", "all_gather", "all_to_all", "barrier")

# Progress states shared with the runner. A running rank either may wait
# for its peers (RUNNING: a transfer, a collective, a communicator's
# creation) or computes on its own (COMPUTING), where no peer can hold it:
# the runner calls a deadlock only when no rank computes.
STARTING, RUNNING, DONE, FAILED, COMPUTING = 0, 1, 2, 3, 4
# The instructions a rank runs without its peers.
LOCAL_OPS = COMPUTE_OPS + ("reshard", "optimizer_step")


def physical_group(plan: Plan, group: str, rank_id: int,
                   replica: int) -> Tuple[int, ...]:
    """The processes of the member set of `group` that holds `rank_id`, in
    the replicas the group spans from `replica` (Plan.replicas_of: dp every
    one, dp_shard its shard group, dp_replicate its position in every shard
    group, any other group `replica` alone)."""
    rank_count = len(plan.rank_ids)
    for members in plan.groups[group]:
        if rank_id not in members:
            continue
        indices = [plan.index_of(m) for m in members]
        return tuple(sorted(d * rank_count + i
                            for d in plan.replicas_of(group, replica)
                            for i in indices))
    raise PlanError(f"no member set of group @{group} holds rank {rank_id}")


def dp_group(plan: Plan, index: int) -> Tuple[int, ...]:
    """The processes that run plan rank `index` in each replica."""
    return tuple(d * len(plan.rank_ids) + index
                 for d in range(plan.data_parallel))


def all_groups(plan: Plan) -> List[Tuple[int, ...]]:
    """Every process group of more than one process the run needs, in one
    order for every process (torch's new_group must be called alike)."""
    found = set()
    for d in range(plan.data_parallel):
        for rank_id in plan.rank_ids:
            for name, sets in plan.groups.items():
                if any(rank_id in s for s in sets):
                    found.add(physical_group(plan, name, rank_id, d))
    for index in range(len(plan.rank_ids)):
        found.add(dp_group(plan, index))
    return sorted(g for g in found if len(g) > 1)


def _where(plan: Plan, process: int) -> str:
    """A process as messages name it: 'rank 1', 'rank 1 (replica 0)'."""
    ranks = len(plan.rank_ids)
    where = f"rank {plan.rank_ids[process % ranks]}"
    if plan.data_parallel > 1:
        where += f" (replica {process // ranks})"
    return where


def _declared(ins: Instruction) -> str:
    """A collective and its stated size, as the verifier words it."""
    size = (f"of {ins.bytes} bytes" if ins.bytes >= 0 else
            "(size not stated)")
    return f"{ins.describe()} {size}"


def collective_mismatch(plan: Plan) -> str:
    """The first collective whose members disagree on its kind or its
    stated size, worded as the verifier's `collective` rule, or "".

    Collective k of a process group is the k-th collective each member
    issues on it; gloo, handed counts that differ, sometimes refuses them
    and sometimes hangs every member until the deadlock watchdog fires, so
    the executor compares what the plan states before it starts a process
    (a size not stated, -1, equals only another -1, as in the verifier).
    A member that issues fewer collectives is a deadlock the watchdog
    reports; the counts a run computes (FSDP shards) are compared at run
    time (RankExecutor._agree)."""
    ranks = len(plan.rank_ids)
    world = ranks * plan.data_parallel
    # (group name, processes) -> process -> its collectives on it, in order.
    issued: Dict[Tuple[str, Tuple[int, ...]],
                 Dict[int, List[Instruction]]] = {}
    for process in range(world):
        rank_id = plan.rank_ids[process % ranks]
        for ins in plan.programs[process % ranks]:
            if not ins.group or ins.group not in plan.groups or \
                    not any(rank_id in s for s in plan.groups[ins.group]):
                continue  # the run names what it cannot find
            members = physical_group(plan, ins.group, rank_id,
                                     process // ranks)
            if len(members) < 2:
                continue
            issued.setdefault((ins.group, members), {}).setdefault(
                process, []).append(ins)
    for (name, members), by_process in sorted(issued.items()):
        first = min(by_process)
        for process in sorted(by_process):
            for k, (a, b) in enumerate(zip(by_process[first],
                                           by_process[process])):
                if a.op == b.op and a.bytes == b.bytes:
                    continue
                return (f"collective #{k} on group @{name}: "
                        f"{_where(plan, process)} issues {_declared(b)}, but "
                        f"{_where(plan, first)} issues {_declared(a)}; members "
                        f"of a group must issue the same collectives (kind "
                        f"and bytes) in the same order")
    return ""


def lazy_communicators(plan: Plan) -> List[Tuple[str, Tuple[int, ...]]]:
    """Each lazy group's member sets of more than one process, in one order
    for every process: a process group of its own each, whose barrier
    stands for the communicator's creation (two lazy groups over the same
    processes are two communicators)."""
    found = set()
    for d in range(plan.data_parallel):
        for rank_id in plan.rank_ids:
            for name in plan.lazy_groups:
                if any(rank_id in s for s in plan.groups[name]):
                    found.add((name, physical_group(plan, name, rank_id, d)))
    return sorted(c for c in found if len(c[1]) > 1)


def flat(tensors: List[torch.Tensor]) -> torch.Tensor:
    return torch.cat([t.reshape(-1) for t in tensors])


class RankExecutor:
    """The state of one rank while it runs its program."""

    def __init__(self, plan: Plan, spec: ModelSpec, process: int,
                 groups: Dict[Tuple[int, ...], object],
                 creations: Optional[Dict[Tuple[str, Tuple[int, ...]],
                                          object]] = None) -> None:
        self.plan = plan
        self.creations = creations or {}
        self.spec = spec
        self.process = process
        self.index = process % len(plan.rank_ids)
        self.replica = process // len(plan.rank_ids)
        self.rank_id = plan.rank_ids[self.index]
        self.program = plan.programs[self.index]
        self.groups = groups
        self.scale = 1.0 / (plan.microbatches * plan.data_parallel)
        held = sorted({i.stage for i in self.program
                       if i.op in COMPUTE_OPS or i.op in (
                           "unshard", "reshard", "reduce_grad")})
        for stage in held:
            if stage >= plan.stages:
                raise PlanError(f"stage {stage} is out of range: the plan "
                                f"has {plan.stages} stages")
        self.modules = {s: make_stage(spec, plan.model_stage(s))
                        for s in held}
        self.fsdp = {i.stage for i in self.program if i.op == "unshard"}
        self.unsharded = set(held) - self.fsdp
        self.shards: Dict[int, torch.Tensor] = {}
        for s in self.fsdp:
            full = flat([p.data for p in self.modules[s].parameters()])
            self.shards[s] = self._slice(full, s).clone()
            self._drop_parameters(s)
        self.inputs: Dict[Tuple[int, int], torch.Tensor] = {}
        self.outputs: Dict[Tuple[int, int], torch.Tensor] = {}
        self.output_grads: Dict[Tuple[int, int], Optional[torch.Tensor]] = {}
        self.input_grads: Dict[Tuple[int, int], torch.Tensor] = {}
        self.received: Dict[Tuple[str, int, int], torch.Tensor] = {}
        # Shapes a shape exchange brought, by (direction, stage, mb): the
        # data receive of that tensor allocates its buffer from it.
        self.shapes: Dict[Tuple[str, int, int], Tuple[int, ...]] = {}
        self.reduced: Dict[int, torch.Tensor] = {}
        self.loss = 0.0
        self.stepped = False
        # Lazy communicators this process created so far (by group).
        self.created: set = set()
        # Global-batch aux heads on this rank: every microbatch's statistic
        # at the stage, as the forwards produce them.
        self.aux_stages = set(plan.global_aux_stages) & set(held)
        if self.aux_stages and (plan.replicas != 1 or plan.data_parallel != 1):
            raise PlanError("the executor computes a global_batch aux loss "
                            "with one pipeline replica and no data "
                            "parallelism")
        for stage in self.aux_stages:
            if plan.is_last_stage(stage):
                raise PlanError(f"the global_batch aux head at stage {stage} "
                                f"sits on the last stage; the executor "
                                f"computes heads on the stages before it")
        self.aux_seen: Dict[int, Dict[int, torch.Tensor]] = {
            s: {} for s in self.aux_stages}

    # -- FSDP shards ------------------------------------------------------
    def _shard_bounds(self, stage: int, length: int) -> Tuple[int, int]:
        dp = self.plan.data_parallel
        size = -(-length // dp)
        begin = min(self.replica * size, length)
        return begin, min(begin + size, length)

    def _slice(self, full: torch.Tensor, stage: int) -> torch.Tensor:
        begin, end = self._shard_bounds(stage, full.numel())
        return full[begin:end]

    def _drop_parameters(self, stage: int) -> None:
        for p in self.modules[stage].parameters():
            p.data = torch.full_like(p.data, math.nan)

    def _set_parameters(self, stage: int, full: torch.Tensor) -> None:
        offset = 0
        for p in self.modules[stage].parameters():
            n = p.numel()
            p.data = full[offset:offset + n].view_as(p).clone()
            offset += n

    def _dp_process_group(self):
        return self.groups.get(dp_group(self.plan, self.index))

    # -- instructions -----------------------------------------------------
    def _module(self, ins: Instruction):
        if ins.stage not in self.unsharded:
            raise PlanError(f"{ins.describe()} runs while the stage's "
                            f"parameters are sharded (no unshard before it)")
        return self.modules[ins.stage]

    def forward(self, ins: Instruction) -> None:
        module = self._module(ins)
        key = (ins.stage, ins.microbatch)
        if key in self.outputs:
            raise PlanError(f"{ins.describe()} runs twice")
        global_mb = self.replica * self.plan.microbatches + ins.microbatch
        x, target = microbatch(self.spec, global_mb)
        if not self.plan.is_first_stage(ins.stage):
            x = self.received.pop(("forward",) + key, None)
            local = self.outputs.get((ins.stage - 1, ins.microbatch))
            if x is None and local is not None:
                # The producer runs on this rank (a V placement's turn).
                x = local.detach().clone()
            if x is None:
                raise PlanError(f"{ins.describe()} has no input: no recv "
                                f"forward of it came first")
            x.requires_grad_(True)
        out = module(x)
        if ins.stage in self.aux_stages:
            seen = self.aux_seen[ins.stage]
            seen[ins.microbatch] = aux_statistic(out.detach())
            if len(seen) == self.plan.microbatches:
                mean = sum(seen.values()) / self.plan.microbatches
                self.loss += float(aux_loss(mean))
        if self.plan.is_last_stage(ins.stage):
            out = loss_fn(out, target) * self.scale
            self.loss += float(out)
        self.inputs[key] = x
        self.outputs[key] = out

    def _output_grad(self, ins: Instruction) -> Optional[torch.Tensor]:
        key = (ins.stage, ins.microbatch)
        if key not in self.outputs:
            raise PlanError(f"{ins.describe()} runs before the forward of "
                            f"its microbatch")
        if self.plan.is_last_stage(ins.stage):
            return None
        grad = self.received.pop(("backward",) + key, None)
        if grad is None and (ins.stage + 1) in self.modules:
            # The consumer runs on this rank (a V placement's turn).
            grad = self.input_grads.pop((ins.stage + 1, ins.microbatch), None)
        if grad is None:
            raise PlanError(f"{ins.describe()} has no output gradient: no "
                            f"recv backward of it came first")
        if ins.stage in self.aux_stages:
            grad = grad + self._aux_grad(ins)
        return grad

    def _aux_grad(self, ins: Instruction) -> torch.Tensor:
        """The aux loss's gradient for this microbatch's output, from the
        forwards that reached the head so far: the global batch's when the
        plan ran them all first, a wrong one otherwise (the check then
        fails, as training would silently go wrong)."""
        seen = self.aux_seen[ins.stage]
        mean = sum(seen.values()) / self.plan.microbatches
        out = self.outputs[(ins.stage, ins.microbatch)].detach()
        stat = out.reshape(-1, HIDDEN)
        # d aux / d out: 2 w mean / M, spread over the rows of the output.
        per_row = 2 * AUX_WEIGHT * mean / self.plan.microbatches / stat.shape[0]
        return per_row.expand_as(stat).reshape(out.shape)

    def backward(self, ins: Instruction) -> None:
        self._module(ins)
        key = (ins.stage, ins.microbatch)
        grad = self._output_grad(ins)
        out = self.outputs.pop(key)
        x = self.inputs.pop(key)
        torch.autograd.backward(out, grad)
        if x.requires_grad:
            self.input_grads[key] = x.grad

    def backward_input(self, ins: Instruction) -> None:
        self._module(ins)
        key = (ins.stage, ins.microbatch)
        grad = self._output_grad(ins)
        self.output_grads[key] = grad
        x = self.inputs[key]
        if x.requires_grad:
            (gx,) = torch.autograd.grad(self.outputs[key], [x], grad,
                                        retain_graph=True)
            self.input_grads[key] = gx

    def backward_weight(self, ins: Instruction) -> None:
        module = self._module(ins)
        key = (ins.stage, ins.microbatch)
        if key not in self.output_grads:
            raise PlanError(f"{ins.describe()} runs before its "
                            f"backward_input")
        grad = self.output_grads.pop(key)
        out = self.outputs.pop(key)
        self.inputs.pop(key)
        params = list(module.parameters())
        grads = torch.autograd.grad(out, params, grad, allow_unused=True)
        for p, g in zip(params, grads):
            if g is not None:
                p.grad = g if p.grad is None else p.grad + g

    def _payload(self, ins: Instruction) -> torch.Tensor:
        key = (ins.stage, ins.microbatch)
        if ins.direction == "forward":
            out = self.outputs.get(key)
            if out is None or self.plan.is_last_stage(ins.stage):
                raise PlanError(f"{ins.describe()} has nothing to send: no "
                                f"forward of a non-last stage made it")
            return out.detach().contiguous()
        grad = self.input_grads.pop(key, None)
        if grad is None:
            raise PlanError(f"{ins.describe()} has nothing to send: no "
                            f"backward of it ran on this rank")
        return grad.contiguous()

    def _shape_payload(self, ins: Instruction) -> torch.Tensor:
        """The shape of the tensor a send of `ins`'s key carries, as int64
        dimensions (Megatron-LM's _communicate_shapes); it leaves the
        tensor where the data send finds it."""
        key = (ins.stage, ins.microbatch)
        tensor = (self.outputs.get(key) if ins.direction == "forward"
                  else self.input_grads.get(key))
        if tensor is None or (ins.direction == "forward" and
                              self.plan.is_last_stage(ins.stage)):
            raise PlanError(f"{ins.describe()} has no tensor to take the "
                            f"shape of")
        return torch.tensor(list(tensor.shape), dtype=torch.int64)

    def _receive_buffer(self, ins: Instruction,
                        run: List[Instruction]) -> torch.Tensor:
        """A data receive's buffer: the shape its shape exchange brought,
        else the model's activation shape (fixed shapes)."""
        key = (ins.direction, ins.stage, ins.microbatch)
        if any(i.payload == "shape" and i.op == "recv" and
               (i.direction, i.stage, i.microbatch) == key for i in run):
            raise PlanError(f"{ins.describe()} is issued together with the "
                            f"shape exchange its buffer is allocated from")
        shape = self.shapes.pop(key, self.spec.activation_shape())
        return torch.empty(shape, dtype=torch.float64)

    def _peer(self, ins: Instruction) -> int:
        return (self.replica * len(self.plan.rank_ids) +
                self.plan.index_of(ins.peer))

    def transfers(self, run: List[Instruction]) -> None:
        """A lone send or recv, or a p2p group issued together."""
        ops = []
        landed = []
        for ins in run:
            if ins.peer == self.rank_id:
                raise PlanError(f"{ins.describe()} names its own rank")
            shape = ins.payload == "shape"
            if ins.op == "send":
                tensor = (self._shape_payload(ins) if shape
                          else self._payload(ins))
                ops.append(dist.P2POp(dist.isend, tensor, self._peer(ins)))
                continue
            if shape:
                buf = torch.empty(len(self.spec.activation_shape()),
                                  dtype=torch.int64)
            else:
                buf = self._receive_buffer(ins, run)
            ops.append(dist.P2POp(dist.irecv, buf, self._peer(ins)))
            landed.append((shape, (ins.direction, ins.stage, ins.microbatch),
                           buf))
        if len(ops) == 1:
            op = ops[0]
            if op.op is dist.isend:
                dist.send(op.tensor, op.peer)
            else:
                dist.recv(op.tensor, op.peer)
        else:
            for request in dist.batch_isend_irecv(ops):
                request.wait()
        for shape, key, buf in landed:
            if shape:
                self.shapes[key] = tuple(int(d) for d in buf.tolist())
            else:
                self.received[key] = buf

    def _flat_grad(self, stage: int) -> torch.Tensor:
        return flat([p.grad if p.grad is not None else torch.zeros_like(p)
                     for p in self.modules[stage].parameters()])

    def _set_grad(self, stage: int, full: torch.Tensor) -> None:
        offset = 0
        for p in self.modules[stage].parameters():
            n = p.numel()
            p.grad = full[offset:offset + n].view_as(p).clone()
            offset += n

    def _agree(self, group, call: str, count: int) -> None:
        """Checks that every member of `group` makes the same torch call
        (`call`, one of AGREED_CALLS) on `count` elements before making it.
        Handed counts that differ, gloo sometimes refuses them and sometimes
        hangs every member until the deadlock watchdog fires; this exchange
        makes every member refuse, at once, what the plan could not state
        (a gradient moved whole by one member and as an FSDP shard by
        another)."""
        code = AGREED_CALLS.index(call)
        mine = torch.tensor([code, count, -code, -count], dtype=torch.int64)
        seen = mine.clone()
        dist.all_reduce(seen, op=dist.ReduceOp.MAX, group=group)
        high_code, high_count, low_code, low_count = (
            int(seen[0]), int(seen[1]), -int(seen[2]), -int(seen[3]))
        if high_code != low_code:
            other = high_code if high_code != code else low_code
            raise PlanError(f"the members of the collective disagree on "
                            f"what it is: this rank runs {call}, another "
                            f"{AGREED_CALLS[other]}")
        if high_count != low_count:
            raise PlanError(f"the members of the collective disagree on "
                            f"its size: this rank moves {count} elements; "
                            f"the members move {low_count} to {high_count}")

    def collective(self, ins: Instruction) -> None:
        members = physical_group(self.plan, ins.group, self.rank_id,
                                 self.replica)
        group = self.groups.get(members)
        if self.plan.reduces_gradients(ins):
            if ins.stage not in self.modules:
                raise PlanError(f"{ins.describe()} reduces the gradients of "
                                f"a stage this rank does not hold")
            if ins.stage in self.reduced:
                # After reduce_grad the gradient the optimizer will use is
                # the reduced one (a shard under FSDP): sum that.
                if group is not None:
                    self._agree(group, "all_reduce",
                                self.reduced[ins.stage].numel())
                    dist.all_reduce(self.reduced[ins.stage], group=group)
                return
            grad = self._flat_grad(ins.stage)
            if group is not None:
                self._agree(group, "all_reduce", grad.numel())
                dist.all_reduce(grad, group=group)
            self._set_grad(ins.stage, grad)
            return
        if group is None:
            return
        size = len(members)
        payload = min(max(ins.bytes, 0), MAX_COLLECTIVE_PAYLOAD)
        count = max(1, -(-payload // 8))
        count = -(-count // size) * size
        call = "all_reduce" if ins.op == "reduce_scatter" else ins.op
        self._agree(group, call, 0 if call == "barrier" else count)
        data = torch.ones(count, dtype=torch.float64)
        if ins.op in ("all_reduce", "reduce_scatter"):
            dist.all_reduce(data, group=group)
        elif ins.op == "all_gather":
            parts = [torch.empty_like(data) for _ in range(size)]
            dist.all_gather(parts, data, group=group)
        elif ins.op == "all_to_all":
            out = torch.empty_like(data)
            dist.all_to_all_single(out, data, group=group)
        else:
            dist.barrier(group=group)

    def unshard(self, ins: Instruction) -> None:
        stage = ins.stage
        if stage in self.unsharded:
            raise PlanError(f"{ins.describe()}: the stage is unsharded "
                            f"already")
        shard = self.shards[stage]
        group = self._dp_process_group()
        if group is None:
            full = shard
        else:
            length = sum(p.numel() for p in self.modules[stage].parameters())
            size = -(-length // self.plan.data_parallel)
            padded = torch.zeros(size, dtype=torch.float64)
            padded[:shard.numel()] = shard
            parts = [torch.empty_like(padded)
                     for _ in range(self.plan.data_parallel)]
            dist.all_gather(parts, padded, group=group)
            full = torch.cat(parts)[:length]
        self._set_parameters(stage, full)
        self.unsharded.add(stage)

    def reshard(self, ins: Instruction) -> None:
        if ins.stage not in self.fsdp or ins.stage not in self.unsharded:
            raise PlanError(f"{ins.describe()} without an unshard before it")
        self._drop_parameters(ins.stage)
        self.unsharded.discard(ins.stage)

    def reduce_grad(self, ins: Instruction) -> None:
        """Sums the stage's gradients over the data-parallel replicas and
        keeps this rank's shard (all of it for a stage not sharded).
        Gradients computed later never reach the optimizer, as in FSDP."""
        if ins.stage in self.reduced:
            raise PlanError(f"{ins.describe()} runs twice")
        grad = self._flat_grad(ins.stage)
        group = self._dp_process_group()
        if group is not None:
            dist.all_reduce(grad, group=group)
        if ins.stage in self.fsdp:
            grad = self._slice(grad, ins.stage)
        self.reduced[ins.stage] = grad.clone()
        for p in self.modules[ins.stage].parameters():
            p.grad = None

    def optimizer_step(self, ins: Instruction) -> None:
        if self.stepped:
            raise PlanError("optimizer_step runs twice")
        self.stepped = True
        self.results = {}
        with torch.no_grad():
            for stage, module in self.modules.items():
                grad = self.reduced.get(stage)
                if grad is None:
                    grad = self._flat_grad(stage)
                    if stage in self.fsdp:
                        grad = self._slice(grad, stage)
                if stage in self.fsdp:
                    self.shards[stage] -= LEARNING_RATE * grad
                    param = self.shards[stage]
                else:
                    full = flat([p.data for p in module.parameters()])
                    param = full - LEARNING_RATE * grad
                    self._set_parameters(stage, param)
                self.results[stage] = (grad.clone(), param.clone())

    def _create_lazy(self, run: List[Instruction]) -> None:
        """Creates each lazy communicator `run` is the first to use: a
        barrier of its members, as NCCL's ncclCommInitRank returns only once
        every member called it (in the order of the run's members, as
        batch_isend_irecv issues them)."""
        for ins in run:
            name = ins.communicator if ins.op in ("send", "recv") \
                else ins.group
            if name not in self.plan.lazy_groups or name in self.created:
                continue
            self.created.add(name)
            members = physical_group(self.plan, name, self.rank_id,
                                     self.replica)
            group = self.creations.get((name, members))
            if group is not None:
                dist.barrier(group=group)

    def run(self, progress) -> None:
        dispatch = {"forward": self.forward, "backward": self.backward,
                    "backward_input": self.backward_input,
                    "backward_weight": self.backward_weight,
                    "unshard": self.unshard, "reshard": self.reshard,
                    "reduce_grad": self.reduce_grad,
                    "optimizer_step": self.optimizer_step}
        for begin, end in bundles(self.program):
            run = self.program[begin:end]
            progress(begin, all(ins.op in LOCAL_OPS for ins in run))
            try:
                self._create_lazy(run)
                if run[0].op in ("send", "recv"):
                    if any(i.op not in ("send", "recv") for i in run):
                        raise PlanError("a p2p group holds a non-transfer")
                    self.transfers(run)
                    continue
                for ins in run:
                    if ins.op in dispatch:
                        dispatch[ins.op](ins)
                    else:
                        self.collective(ins)
            except PlanError as e:
                raise PlanError(f"instruction {begin} "
                                f"({self.program[begin].describe()}): "
                                f"{e}") from None

    def report(self) -> dict:
        """Loss and, per stage, gradient and parameters after the step (the
        step's values even when the plan has none: then the stage is
        reported unstepped)."""
        stages = {}
        results = getattr(self, "results", {})
        for stage, module in self.modules.items():
            if stage in results:
                grad, param = results[stage]
            else:
                grad = self.reduced.get(stage, self._flat_grad(stage))
                param = (self.shards[stage] if stage in self.fsdp else
                         flat([p.data for p in module.parameters()]))
            length = sum(p.numel() for p in module.parameters())
            begin, _ = (self._shard_bounds(stage, length)
                        if stage in self.fsdp else (0, length))
            stages[stage] = {"grad": grad.tolist(), "param": param.tolist(),
                             "offset": begin}
        return {"process": self.process, "rank": self.rank_id,
                "replica": self.replica, "loss": self.loss,
                "stepped": self.stepped, "stages": stages}


def worker_main(plan: Plan, spec: ModelSpec, process: int, world: int,
                init_method: str, timeout: float, progress, states,
                results) -> None:
    """Entry point of one process."""
    torch.set_num_threads(1)
    try:
        dist.init_process_group(
            "gloo", init_method=init_method, rank=process, world_size=world,
            timeout=timedelta(seconds=max(4 * timeout, 30)))
        groups = {members: dist.new_group(ranks=list(members))
                  for members in all_groups(plan)}
        creations = {key: dist.new_group(ranks=list(key[1]))
                     for key in lazy_communicators(plan)}
        executor = RankExecutor(plan, spec, process, groups, creations)
        states[process] = RUNNING

        def mark(index: int, local: bool) -> None:
            progress[process] = index
            states[process] = COMPUTING if local else RUNNING

        executor.run(mark)
        results.put(("ok", process, executor.report()))
        states[process] = DONE
    except PlanError as e:
        results.put(("plan", process, str(e)))
        states[process] = FAILED
    except Exception as e:  # a torch error (or a bug): where, and what
        at = progress[process]
        where = f"instruction {at}: " if at >= 0 else "starting: "
        first = (str(e).strip().splitlines() or [""])[0][:200]
        results.put(("crash", process,
                     f"{where}{type(e).__name__}: {first}"))
        states[process] = FAILED
