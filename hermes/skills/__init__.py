"""Skills: folders of know-how the agent loads when a task needs them."""
