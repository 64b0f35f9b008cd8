"""The leaves every layer may use: the one error hierarchy, the user's own files, human units and text, rates and
percentiles (pure arithmetic)."""
