project = "edge"

search "t1" {
  url          = "http://127.0.0.1:9200"
  cluster_name = "t1"
}

index ".dashboard" {
  search = "t1"
  mapping "search" {
    properties = { title = "string", savedSearchId = "string" }
  }
}

document "search" "a" { # ERROR: Cycle in document references
  source = { title = "A", savedSearchId = "b" }
}

document "search" "b" { # ERROR: Cycle in document references
  source = { title = "B", savedSearchId = "a" }
}
