"""The shape of a workload, read from what was issued: op streams (op_stream), the operations a
generator or a reference client wrote one line each, and their statistics (op mix, value sizes,
scan lengths, key skew); a RocksDB trace's measure (trace); a stored phase's record of what its
workload sent (record: workload_shape.json). Below the campaign: it reads driver outputs and
asks the driver for op streams, nothing else of lsmbench."""
