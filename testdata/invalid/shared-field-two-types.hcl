project = "edge"

search "t1" {
  url          = "http://127.0.0.1:9200"
  cluster_name = "t1"
}

index "shared" {
  search = "t1"
  mapping "a" {
    properties = {
      title = { type = "string", index = "not_analyzed" }
    }
  }
  mapping "b" {
    properties = {
      title = "string" # ERROR: Field mapped differently in two types
    }
  }
}
