"""Skills from a component vocabulary (seed 003): standing, falling, walking and rolling as YAML data."""
