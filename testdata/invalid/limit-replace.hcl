project = "edge"

# Each replace makes the string ten times longer: refused before it runs.
locals {
  s = replace(replace(replace(replace(replace(replace(replace(replace("xxxxxxxx", "x", "xxxxxxxxxx"), "x", "xxxxxxxxxx"), "x", "xxxxxxxxxx"), "x", "xxxxxxxxxx"), "x", "xxxxxxxxxx"), "x", "xxxxxxxxxx"), "x", "xxxxxxxxxx"), "x", "xxxxxxxxxx") # ERROR: Error in function call
}
