"""Task-level control (Coros 2010, Ch. 4): explore the states GBWC's step controllers reach, fit a value
function over states and task parameters, and walk by the policy it gives."""
