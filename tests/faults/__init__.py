"""Fault drills (issue 57): each run must end final within a stated bound
when a part it depends on fails and comes back."""
