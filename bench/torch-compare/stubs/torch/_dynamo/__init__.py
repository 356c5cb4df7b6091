class OptimizedModule:  # isinstance target in _check_torch_compile_compatibility
    pass
