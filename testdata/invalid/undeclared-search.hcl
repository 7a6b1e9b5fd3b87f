project = "edge"

index ".dashboard" {
  search = "t3" # ERROR: Reference to undeclared search cluster
  mapping "search" {
    properties = { title = "string" }
  }
}
