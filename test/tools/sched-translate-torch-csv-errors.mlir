// RUN: not sched-translate --export-torch-csv -split-input-file %s 2>&1 | FileCheck %s --check-prefixes=CHECK,COMPUTE
// RUN: not sched-translate --export-torch-csv-comms -split-input-file %s 2>&1 | FileCheck %s --check-prefixes=CHECK,COMMS

// A collective has no CSV cell; without transfers, the comms flavour
// stops earlier: there is no compute-only schedule to insert them into.
// COMPUTE: error: rank 0 holds a collective or optimizer step at action 2; the PyTorch CSV has no cell for it
// COMMS: error: cannot insert transfers: transfers go into a compute-only schedule (F, B, I, W and overlaps), but rank 0 holds a collective
sched.schedule @collective stages 1 microbatches 1 {
  sched.group @dp members [[0]]
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
    sched.all_reduce @dp stage 0
  }
}

// -----

// A CSV holds one schedule.
// CHECK: error: a PyTorch CSV holds one schedule; the module must hold exactly one sched.schedule
sched.schedule @a stages 1 microbatches 1 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
  }
}
sched.schedule @b stages 1 microbatches 1 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.backward stage 0 mb 0
  }
}

// -----

// CHECK: error: a PyTorch CSV holds one schedule; the module must hold exactly one sched.schedule
sched.pipeline @p pp 2 microbatches 2 {}

// -----

// Inserting the transfers of the comms flavour needs one rank per stage;
// the compute flavour writes what is there.
// COMMS: error: cannot insert transfers: stage 1 runs on rank 1 and rank 2; a transfer needs one rank per stage
sched.schedule @split stages 2 microbatches 2 {
  sched.rank 0 {
    sched.forward stage 0 mb 0
    sched.forward stage 0 mb 1
    sched.backward stage 0 mb 0
    sched.backward stage 0 mb 1
  }
  sched.rank 1 {
    sched.forward stage 1 mb 0
    sched.backward stage 1 mb 0
  }
  sched.rank 2 {
    sched.forward stage 1 mb 1
    sched.backward stage 1 mb 1
  }
}
