"""Frame rates of a rectified motion, in a module of their own so that the command line can print them without
loading the rectifier."""

DEFAULT_RATE = 60.0        # Hz (the source samples at 30-90 Hz, Sec. 4.2.1)
# Hz, a point-footed walker's (planar5's; a decision): at 60 Hz the first-order transcription's zero dynamics differ
# from the simulator's enough that the 5-link walker settled on steps twice as long in time; at 240 Hz, 25% longer
POINT_FOOT_RATE = 240.0
