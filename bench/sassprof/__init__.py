"""Static SASS profile: parse nvdisasm's listing, build the control-flow graph,
find the MMA main loops, count one iteration by instruction class and bound
its cycles per SM sub-partition (docs/perf.md, "Static SASS profile: method")."""
