print("fob-bench")
