// Every local verifier message of the sched dialect.
// RUN: sched-opt %s -split-input-file -verify-diagnostics

// expected-error @below {{has 2000000 x 1 stages; at most 1048576 are supported}}
sched.pipeline @p pp 2000000 microbatches 1 {}

// -----

// expected-error @below {{has 100000000 microbatches; at most 67108864 are supported}}
sched.pipeline @p pp 2 microbatches 100000000 {}

// -----

// expected-error @below {{placement v needs exactly 2 stages per rank, but vpp is 3}}
sched.pipeline @p pp 2 vpp 3 microbatches 4 placement v {}

// -----

// expected-error @below {{attribute 'pp' failed to satisfy constraint}}
sched.pipeline @p pp 0 microbatches 4 {}

// -----

sched.pipeline @p pp 2 microbatches 4 {
  // expected-note @below {{first declared here}}
  sched.stage 0 layers 1 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 0 weight_grad 0 parameters 0
  // expected-error @below {{declares stage 0 a second time}}
  sched.stage 0 layers 1 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 0 weight_grad 0 parameters 0
}

// -----

// expected-error @below {{declares 1 of its 2 stages: stage 1 has no sched.stage (declare all stages or none)}}
sched.pipeline @p pp 2 microbatches 4 {
  sched.stage 0 layers 1 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 0 weight_grad 0 parameters 0
}

// -----

sched.pipeline @p pp 2 microbatches 4 {
  // expected-error @below {{stage 2 is out of range: the pipeline has 2 stages (0..1)}}
  sched.stage 2 layers 1 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 0 weight_grad 0 parameters 0
}

// -----

sched.pipeline @p pp 1 microbatches 4 {
  // expected-error @below {{backward_input cost must be 0 or a finite number >= 1e-300, got -1}}
  sched.stage 0 layers 1 forward 1.0 backward_input -1.0 backward_weight 1.0 activation 0 weight_grad 0 parameters 0
}

// -----

// A denormal time made a picture's scale (width over makespan) infinite:
// schedc show drew at x="inf".
sched.pipeline @p pp 1 microbatches 4 {
  // expected-error @below {{forward cost must be 0 or a finite number >= 1e-300, got 9.999889e-321}}
  sched.stage 0 layers 1 forward 1.0e-320 backward_input 1.0 backward_weight 1.0 activation 0 weight_grad 0 parameters 0
}

// -----

sched.pipeline @p pp 1 microbatches 4 {
  // expected-error @below {{weight_grad (10 bytes) exceeds activation (5 bytes)}}
  sched.stage 0 layers 1 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 5 weight_grad 10 parameters 0
}

// -----

sched.pipeline @p pp 2 vpp 2 microbatches 4 {
  // expected-error @below {{stage 4 is out of range: the pipeline has 4 stages (0..3)}}
  sched.aux_head stage 4 scope global_batch
}

// -----

sched.pipeline @p pp 2 microbatches 4 {
  // expected-error @below {{has no member sets}}
  sched.group @g members []
}

// -----

sched.pipeline @p pp 2 microbatches 4 {
  // expected-error @below {{has an empty member set}}
  sched.group @g members [[0], []]
}

// -----

sched.pipeline @p pp 2 microbatches 4 {
  // expected-error @below {{names rank -1; rank ids run from 0 to 2147483647}}
  sched.group @g members [[-1]]
}

// -----

sched.pipeline @p pp 2 microbatches 4 {
  // expected-error @below {{names rank 1 in two member sets (they must be disjoint)}}
  sched.group @g members [[0, 1], [1]]
}

// -----

sched.pipeline @p pp 2 microbatches 4 {
  // expected-error @below {{names rank 2, but the pipeline has 2 ranks}}
  sched.group @g members [[0, 2]]
}

// -----

sched.pipeline @p pp 2 microbatches 4 {
  // expected-error @below {{member sets must be lists of ranks}}
  "sched.group"() <{sym_name = "g", members = [1, 2]}> : () -> ()
}

// -----

sched.pipeline @p pp 2 microbatches 4 {
  // expected-error @below {{names group @dp, which is not declared by a sched.group}}
  sched.collective all_reduce @dp bytes 8 when step
}

// -----

sched.pipeline @p pp 2 microbatches 4 {
  sched.group @dp members [[0], [1]]
  // expected-error @below {{stage 7 is out of range: the pipeline has 2 stages (0..1)}}
  sched.collective all_reduce @dp bytes 8 when after_backward stage 7
}

// -----

// expected-error @below {{has 2000000 stages; at most 1048576 are supported}}
sched.schedule @s stages 2000000 microbatches 1 {}

// -----

// expected-error @below {{has 100000000 microbatches; at most 67108864 are supported}}
sched.schedule @s stages 2 microbatches 100000000 {}

// -----

// expected-error @below {{has 2 pipeline replicas, which must divide both its 3 stages and its 2 microbatches}}
sched.schedule @s stages 3 microbatches 2 replicas 2 {}

// -----

// expected-error @below {{has 2 pipeline replicas, which must divide both its 4 stages and its 3 microbatches}}
sched.schedule @s stages 4 microbatches 3 replicas 2 {}

// -----

// expected-error @below {{attribute 'replicas' failed to satisfy constraint}}
sched.schedule @s stages 4 microbatches 4 replicas 0 {}

// -----

sched.schedule @s stages 2 microbatches 1 {
  // expected-note @below {{first program here}}
  sched.rank 0 {}
  // expected-error @below {{rank 0 has a second program}}
  sched.rank 0 {}
}

// -----

sched.schedule @s stages 2 microbatches 1 {
  sched.rank 0 {}
  // expected-error @below {{names rank 1, but the schedule has no sched.rank 1}}
  sched.group @g members [[0, 1]]
}

// -----

sched.schedule @s stages 2 microbatches 4 {
  sched.rank 0 {
    // expected-error @below {{stage 2 is out of range: the schedule has 2 stages (0..1)}}
    sched.forward stage 2 mb 0
  }
}

// -----

sched.schedule @s stages 2 microbatches 4 {
  sched.rank 0 {
    // expected-error @below {{microbatch 4 is out of range: the schedule has 4 microbatches (0..3)}}
    sched.backward stage 0 mb 4
  }
}

// -----

sched.schedule @s stages 2 microbatches 4 {
  sched.rank 0 {
    // expected-error @below {{microbatch 9 is out of range}}
    sched.backward_input stage 0 mb 9
  }
}

// -----

sched.schedule @s stages 2 microbatches 4 {
  sched.rank 0 {
    // expected-error @below {{stage 5 is out of range}}
    sched.backward_weight stage 5 mb 0
  }
}

// -----

sched.schedule @s stages 2 microbatches 4 {
  sched.rank 0 {
    // expected-error @below {{attribute 'microbatch' failed to satisfy constraint}}
    sched.forward stage 0 mb -1
  }
}

// -----

sched.schedule @s stages 2 microbatches 4 {
  sched.rank 0 {
    // expected-error @below {{must hold exactly one forward and one backward, found 2 forward and 0 backward}}
    sched.overlap {
      sched.forward stage 0 mb 0
      sched.forward stage 0 mb 1
    }
  }
}

// -----

sched.schedule @s stages 2 microbatches 4 {
  sched.rank 0 {
    sched.overlap {
      sched.forward stage 0 mb 0
      // expected-error @below {{cannot be part of a sched.overlap}}
      sched.backward_weight stage 0 mb 1
    }
  }
}

// -----

sched.schedule @s stages 2 microbatches 4 {
  sched.rank 0 {
    sched.overlap {
      // expected-error @below {{expects parent op to be one of 'sched.rank, sched.p2p_group'}}
      sched.send forward stage 0 mb 0 to 1
    }
  }
  sched.rank 1 {}
}

// -----

sched.schedule @s stages 2 microbatches 4 {
  sched.rank 0 {}
  sched.rank 1 {
    // expected-error @below {{moves forward data to stage 2, which does not exist (the schedule has 2 stages)}}
    sched.send forward stage 1 mb 0 to 0
  }
}

// -----

sched.schedule @s stages 2 microbatches 4 {
  sched.rank 0 {
    // expected-error @below {{moves forward data from stage -1, which does not exist (the schedule has 2 stages)}}
    sched.recv forward stage 0 mb 0 from 1
  }
  sched.rank 1 {}
}

// -----

sched.schedule @s stages 2 microbatches 4 {
  sched.rank 0 {
    // expected-error @below {{moves backward data to stage -1, which does not exist}}
    sched.send backward stage 0 mb 0 to 1
  }
  sched.rank 1 {}
}

// -----

sched.schedule @s stages 2 microbatches 4 {
  sched.rank 0 {}
  sched.rank 1 {
    // expected-error @below {{moves backward data from stage 2, which does not exist}}
    sched.recv backward stage 1 mb 0 from 0
  }
}

// -----

// A rank id past 2^31 - 1, INT64_MAX among them (once a crash: it is
// DenseMap's empty key), is refused.
sched.schedule @s stages 2 microbatches 1 {
  sched.rank 0 {}
  // expected-error @below {{attribute 'id' failed to satisfy constraint: rank id from 0 to 2147483647 (2^31 - 1)}}
  sched.rank 9223372036854775807 {}
}

// -----

sched.schedule @s stages 2 microbatches 1 {
  // expected-error @below {{attribute 'id' failed to satisfy constraint: rank id from 0 to 2147483647 (2^31 - 1)}}
  sched.rank 2147483648 {}
}

// -----

sched.schedule @s stages 2 microbatches 4 {
  sched.rank 0 {
    // expected-error @below {{attribute 'peer' failed to satisfy constraint: rank id from 0 to 2147483647 (2^31 - 1)}}
    sched.send forward stage 0 mb 0 to 9223372036854775806
  }
}

// -----

sched.schedule @s stages 2 microbatches 4 {
  // expected-error @below {{names rank 2147483648; rank ids run from 0 to 2147483647}}
  sched.group @g members [[0], [2147483648]]
  sched.rank 0 {}
}

// -----

sched.schedule @s stages 2 microbatches 4 {
  sched.rank 0 {
    sched.p2p_group {
      // expected-error @below {{names peer rank 5, but the schedule has no sched.rank 5}}
      sched.recv backward stage 0 mb 0 from 5
    }
  }
}

// -----

sched.schedule @s stages 2 microbatches 4 {
  sched.rank 0 {
    // expected-error @below {{names peer rank 3, but the schedule has no sched.rank 3}}
    sched.send forward stage 0 mb 0 to 3
  }
}

// -----

sched.schedule @s stages 2 microbatches 4 {
  sched.rank 0 {
    // expected-error @below {{is empty; it must hold at least one sched.send or sched.recv}}
    sched.p2p_group {
    }
  }
}

// -----

sched.schedule @s stages 2 microbatches 4 {
  sched.rank 0 {
    sched.p2p_group {
      // expected-error @below {{expects parent op to be one of 'sched.rank, sched.overlap'}}
      sched.forward stage 0 mb 0
    }
  }
}

// -----

sched.schedule @s stages 2 microbatches 4 {
  sched.rank 0 {
    // expected-error @below {{names group @dp, which is not declared by a sched.group}}
    sched.all_reduce @dp
  }
}

// -----

sched.schedule @s stages 2 microbatches 4 {
  sched.group @g members [[1]]
  sched.rank 0 {
    // expected-error @below {{is issued by rank 0, which is not a member of group @g}}
    sched.barrier @g
  }
  sched.rank 1 {}
}

// -----

sched.schedule @s stages 2 microbatches 4 {
  sched.group @g members [[0]]
  sched.rank 0 {
    // expected-error @below {{stage 3 is out of range}}
    sched.reduce_scatter @g stage 3
  }
}

// -----

sched.schedule @s stages 2 microbatches 4 {
  sched.rank 0 {
    // expected-error @below {{stage 2 is out of range}}
    sched.unshard stage 2
  }
}

// -----

sched.schedule @s stages 2 microbatches 4 {
  sched.rank 0 {
    // expected-error @below {{stage 2 is out of range}}
    sched.reshard stage 2
  }
}

// -----

sched.schedule @s stages 2 microbatches 4 {
  sched.rank 0 {
    // expected-error @below {{stage 9 is out of range}}
    sched.reduce_grad stage 9
  }
}

// -----

sched.pipeline @p pp 2 microbatches 4 {
  // expected-error @below {{expects parent op 'sched.rank'}}
  sched.optimizer_step
}

// -----

// expected-error @below {{expects parent op 'sched.schedule'}}
sched.rank 0 {}

// -----

sched.schedule @s stages 2 microbatches 4 {
  sched.rank 0 {
    // expected-error @below {{expected 'mb'}}
    sched.forward stage 0 microbatch 1
  }
}

// -----

sched.pipeline @p pp 4 microbatches 8 {
  // expected-error @below {{axis 'pp' has size 2, but the pipeline has pp 4}}
  sched.mesh dp = 2, pp = 2
}

// -----

sched.pipeline @p pp 4 microbatches 8 {
  // expected-error @below {{names axis 'dp' twice}}
  sched.mesh dp = 2, dp = 4
}

// -----

sched.pipeline @p pp 4 microbatches 8 {
  // expected-error @below {{axis 'tp' has size 0; sizes must be at least 1}}
  sched.mesh tp = 0
}

// -----

sched.pipeline @p pp 4 microbatches 8 {
  // expected-error @below {{spans more than 2^40 devices}}
  sched.mesh dp = 1048576, tp = 1048576, cp = 2
}

// -----

sched.pipeline @p pp 4 microbatches 8 {
  // expected-error @below {{names 2 axes but gives 1 sizes}}
  "sched.mesh"() <{axes = ["dp", "tp"], sizes = array<i64: 2>}> : () -> ()
}

// -----

sched.pipeline @p pp 4 microbatches 8 {
  // expected-error @below {{has no axes}}
  "sched.mesh"() <{axes = [], sizes = array<i64>}> : () -> ()
}

// -----

sched.pipeline @p pp 4 microbatches 8 {
  // expected-error @below {{expected '='}}
  sched.mesh dp 2
}

// -----

sched.pipeline @p pp 2 microbatches 2 {
  sched.group @dp members [[0], [1]]
  // expected-error @below {{'sched.aux_head' op has a bias update, but only an aux_free head updates a bias (scope is global_batch)}}
  sched.aux_head stage 1 scope global_batch bias @dp bytes 64
}

// -----

sched.pipeline @p pp 2 microbatches 2 {
  // expected-error @below {{'sched.aux_head' op names group @ep, which is not declared by a sched.group}}
  sched.aux_head stage 1 scope aux_free bias @ep bytes 64
}

// -----

sched.schedule @s stages 1 microbatches 1 {
  sched.group @dp members [[0]]
  sched.collective all_reduce @dp bytes 8 when step
  sched.rank 0 {
    // expected-error @below {{'sched.all_reduce' op names declaration 1, but the schedule declares 1 sched.collective(s)}}
    sched.all_reduce @dp stage 0 bytes 8 declaration 1
  }
}

// -----

sched.schedule @s stages 1 microbatches 1 {
  sched.group @dp members [[0]]
  sched.collective all_reduce @dp bytes 8 when step
  sched.rank 0 {
    // expected-error @below {{'sched.all_gather' op names declaration 0 (sched.collective all_reduce @dp when step), which does not explain it: the declaration it names has its kind and group, and its stage and bytes where both name them}}
    sched.all_gather @dp stage 0 bytes 8 declaration 0
  }
}

// -----

sched.schedule @s stages 1 microbatches 1 {
  sched.group @dp members [[0]]
  sched.collective all_reduce @dp bytes 8 when step
  sched.rank 0 {
    // expected-error @below {{'sched.all_reduce' op names declaration 0 (sched.collective all_reduce @dp when step), which does not explain it}}
    sched.all_reduce @dp stage 0 bytes 16 declaration 0
  }
}
