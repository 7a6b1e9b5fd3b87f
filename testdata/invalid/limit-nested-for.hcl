project = "edge"

# 64 Mi values from a few characters: refused after MaxValues, in a fraction of a second.
locals {
  all = flatten([for i in range(1024) : [for j in range(1024) : [for k in range(64) : k]]]) # ERROR: Spec asks for too much work
}
