"""Tools for plait's developers, apart from the product: benchmarks and the recall harness."""
