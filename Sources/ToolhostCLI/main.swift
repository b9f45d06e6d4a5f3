print("toolhost")
