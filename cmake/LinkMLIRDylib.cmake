#===- LinkMLIRDylib.cmake - link schedc into a loadable module ------------===#
#
# A shared object that is loaded into a process that already holds MLIR and
# LLVM (Debian's mlir-opt, python3 importing our module) must use that
# process's copy: libMLIR.so and libLLVM.so. Linking the static archives
# (libMLIRIR.a, libLLVMSupport.a) instead would give the module its own
# MLIRContext internals, TypeIDs and llvm::cl registry, and a dialect it
# registers would land in a registry mlir-opt never reads. So the module
# takes our archives by file (their own link interfaces name the static
# MLIR and LLVM libraries) and the two shared libraries for the rest.

# schedc_link_with_mlir_dylib(target lib...): links the archives of the
# schedc libraries `lib...` into `target`, then libMLIR.so, libLLVM.so and
# Z3.
function(schedc_link_with_mlir_dylib target)
  set(archives)
  foreach(lib ${ARGN})
    list(APPEND archives $<TARGET_FILE:${lib}>)
    add_dependencies(${target} ${lib})
  endforeach()
  target_link_libraries(${target} PRIVATE
    -Wl,--start-group ${archives} -Wl,--end-group
    MLIR LLVM z3)
  # Installed, it still finds the shared libraries it was linked against.
  set_property(TARGET ${target} PROPERTY INSTALL_RPATH "${LLVM_LIBRARY_DIR}")
endfunction()
