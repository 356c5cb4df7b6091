#===- LinkMLIRDylib.cmake - link schedc into a loadable module ------------===#
#
# A shared object that is loaded into a process that already holds MLIR and
# LLVM (Debian's mlir-opt, python3 importing our module) must use that
# process's copy: libMLIR.so and libLLVM.so. Our libraries' link interfaces
# name the static MLIR archives (libMLIRIR.a, ...), which would put a second
# copy of MLIR's core into the module (docs/embedding.md). So the module
# takes our own archives by file and the two shared libraries for the rest.

# schedc_library_closure(out root...): the schedc libraries `root...` and
# every schedc library they link, transitively (built targets only; imported
# MLIR and LLVM targets and plain library names are left out).
function(schedc_library_closure out)
  set(seen)
  set(pending ${ARGN})
  while(pending)
    list(POP_FRONT pending lib)
    if(NOT TARGET ${lib} OR lib IN_LIST seen)
      continue()
    endif()
    get_target_property(imported ${lib} IMPORTED)
    if(imported)
      continue()
    endif()
    list(APPEND seen ${lib})
    get_target_property(deps ${lib} LINK_LIBRARIES)
    if(deps)
      list(APPEND pending ${deps})
    endif()
  endwhile()
  set(${out} ${seen} PARENT_SCOPE)
endfunction()

# schedc_link_with_mlir_dylib(target root...): links the archives of the
# schedc libraries `root...` and of everything of ours they need into
# `target`, then libMLIR.so, libLLVM.so, Z3 and fmt.
function(schedc_link_with_mlir_dylib target)
  schedc_library_closure(libs ${ARGN})
  set(archives)
  foreach(lib ${libs})
    list(APPEND archives $<TARGET_FILE:${lib}>)
    add_dependencies(${target} ${lib})
  endforeach()
  target_link_libraries(${target} PRIVATE
    -Wl,--start-group ${archives} -Wl,--end-group
    MLIR LLVM z3 fmt::fmt)
  # Installed, it still finds the shared libraries it was linked against.
  set_property(TARGET ${target} PROPERTY INSTALL_RPATH "${LLVM_LIBRARY_DIR}")
endfunction()
