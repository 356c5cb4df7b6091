// Transfers carry the bytes a stage declares as its `output`, and the
// verifier's memory walk counts the receive buffers.
// RUN: sched-opt %s --sched-lower-1f1b --sched-insert-p2p | FileCheck %s
// RUN: sched-opt %s --sched-lower-1f1b --sched-insert-p2p --sched-verify="memory-limit=1208"
// RUN: not sched-opt %s --sched-lower-1f1b --sched-insert-p2p --sched-verify="memory-limit=1207" 2>&1 | FileCheck %s --check-prefix=LIMIT

// Between stages 0 and 1 travel stage 0's output activation (8 bytes) and,
// back, its gradient of the same size; stage 1's output (16) goes nowhere.
// CHECK:      sched.rank 0 {
// CHECK:      sched.send forward stage 0 mb 0 to 1 bytes 8
// CHECK:      sched.recv backward stage 0 mb 0 from 1 bytes 8
// CHECK:      sched.rank 1 {
// CHECK-NEXT: sched.recv forward stage 1 mb 0 from 0 bytes 8
// CHECK:      sched.send backward stage 1 mb 0 to 0 bytes 8

// Rank 0 holds 1000 bytes of parameters and, after its two forwards, two
// activations of 100; the receive of mb 0's gradient adds an 8-byte buffer
// before B(0, mb 0) frees anything: 1208 at the peak.
// LIMIT: error: [memory] memory on rank 0 reaches 1208 bytes here, over the limit of 1207 bytes (its peak is 1208 bytes)
// LIMIT: note: live here: 1208 bytes = 2 whole activations 200 bytes [(0,0) (0,1)] + 1 received gradients 8 bytes [(0,0)] + static 1000 bytes
sched.pipeline @sized pp 2 microbatches 2 {
  sched.stage 0 layers 1 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 100 weight_grad 50 parameters 1000 output 8
  sched.stage 1 layers 1 forward 1.0 backward_input 1.0 backward_weight 1.0 activation 100 weight_grad 50 parameters 1000 output 16
}
