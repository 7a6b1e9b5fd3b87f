project = "Edge Team" # ERROR: Invalid project name
