// Placeholder until the Network worker lands.
print("not built yet")
