// Placeholder until the Cache worker lands.
print("not built yet")
