print("monarch: not built yet")
