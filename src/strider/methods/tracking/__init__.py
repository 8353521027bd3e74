"""Phase-indexed tracking (Abe 2012, thesis; phase-tracking.md): motion capture rectified by trajectory
optimization into a physically valid cyclic gait, then tracked by a planar walker."""
