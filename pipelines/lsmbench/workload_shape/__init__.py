"""The shape of a workload, read from what was issued: op streams (op_stream), the operations a
generator or a reference client wrote one line each, and their statistics (op mix, value sizes,
scan lengths, key skew). Pure analysis: imports nothing of lsmbench."""
