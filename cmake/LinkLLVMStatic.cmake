#===- LinkLLVMStatic.cmake - our tools link LLVM's static archives --------===#
#
# Debian's LLVM is built with LLVM_LINK_LLVM_DYLIB, so every MLIR archive
# names libLLVM.so in its link interface. Loading libLLVM.so costs a
# process about 54 MB of resident memory and 10 ms before main (it runs
# 711 static initialisers spread over 150 MB of code, and the kernel maps
# each touched page with its neighbours), more than `schedc verify` needs
# for a 200,000-action schedule (docs/verifier.md, "Cost"). So our build
# links LLVM's static component archives instead: only the code the tools
# call is in them, and libLLVM.so is not loaded at all.
#
# What loads into a process that already holds LLVM (the mlir-opt plugin,
# the Python module) links the shared libraries instead
# (LinkMLIRDylib.cmake), and the installed package maps the archives back
# to libLLVM.so for downstream projects (SchedcConfig.cmake.in), where MLIR
# names it: one copy of LLVM per process, always.

# The LLVM components our libraries and the MLIR core they use (IR, parser,
# passes, tool drivers, the remark streamer) need.
set(SCHEDC_LLVM_STATIC_COMPONENTS LLVMSupport LLVMDemangle LLVMRemarks)
set(link_only_components ${SCHEDC_LLVM_STATIC_COMPONENTS})
list(TRANSFORM link_only_components PREPEND "$<LINK_ONLY:")
list(TRANSFORM link_only_components APPEND ">")

# add_llvm_library/add_llvm_executable: LINK_COMPONENTS name the archives.
set(LLVM_LINK_LLVM_DYLIB OFF)

# The MLIR archives: "LLVM" in their link interface becomes the archives.
foreach(target ${MLIR_EXPORTED_TARGETS})
  if(NOT TARGET ${target} OR target STREQUAL "MLIR")
    continue()
  endif()
  get_target_property(type ${target} TYPE)
  if(NOT type STREQUAL "STATIC_LIBRARY" AND NOT type STREQUAL
      "INTERFACE_LIBRARY")
    continue()
  endif()
  get_target_property(interface ${target} INTERFACE_LINK_LIBRARIES)
  if(NOT interface)
    continue()
  endif()
  list(TRANSFORM interface REPLACE "^LLVM$"
    "${SCHEDC_LLVM_STATIC_COMPONENTS}")
  list(TRANSFORM interface REPLACE "^\\$<LINK_ONLY:LLVM>$"
    "${link_only_components}")
  set_target_properties(${target} PROPERTIES
    INTERFACE_LINK_LIBRARIES "${interface}")
endforeach()
