//===- SchedEnums.td - enumerations of the sched dialect ---*- tablegen -*-===//

#ifndef SCHED_ENUMS_TD
#define SCHED_ENUMS_TD

include "mlir/IR/EnumAttr.td"

def Sched_Placement : I32EnumAttr<"Placement",
    "how stages are placed on pipeline ranks", [
      I32EnumAttrCase<"Loop", 0, "loop">,
      I32EnumAttrCase<"V", 1, "v">
    ]> {
  let cppNamespace = "::sched";
}

def Sched_AuxScope : I32EnumAttr<"AuxScope",
    "what an auxiliary loss is computed over", [
      I32EnumAttrCase<"Microbatch", 0, "microbatch">,
      I32EnumAttrCase<"Sequence", 1, "sequence">,
      I32EnumAttrCase<"GlobalBatch", 2, "global_batch">,
      I32EnumAttrCase<"AuxFree", 3, "aux_free">
    ]> {
  let cppNamespace = "::sched";
}

def Sched_Direction : I32EnumAttr<"Direction",
    "which way a point-to-point transfer carries data", [
      I32EnumAttrCase<"Forward", 0, "forward">,
      I32EnumAttrCase<"Backward", 1, "backward">
    ]> {
  let cppNamespace = "::sched";
}

def Sched_CollectiveKind : I32EnumAttr<"CollectiveKind",
    "a collective communication primitive", [
      I32EnumAttrCase<"AllReduce", 0, "all_reduce">,
      I32EnumAttrCase<"ReduceScatter", 1, "reduce_scatter">,
      I32EnumAttrCase<"AllGather", 2, "all_gather">,
      I32EnumAttrCase<"AllToAll", 3, "all_to_all">,
      I32EnumAttrCase<"Barrier", 4, "barrier">
    ]> {
  let cppNamespace = "::sched";
}

def Sched_CollectiveWhen : I32EnumAttr<"CollectiveWhen",
    "where a declared collective runs relative to a stage's work", [
      I32EnumAttrCase<"BeforeForward", 0, "before_forward">,
      I32EnumAttrCase<"AfterForward", 1, "after_forward">,
      I32EnumAttrCase<"BeforeBackward", 2, "before_backward">,
      I32EnumAttrCase<"AfterBackward", 3, "after_backward">,
      I32EnumAttrCase<"Step", 4, "step">
    ]> {
  let cppNamespace = "::sched";
}

#endif // SCHED_ENUMS_TD
