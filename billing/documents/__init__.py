"""What an issued bill prints: its money box (pure) and its view model for the paper bill."""
