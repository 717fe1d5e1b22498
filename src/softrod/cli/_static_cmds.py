"""Static-model commands: solve, info, plot, schema, demo, bench static."""
