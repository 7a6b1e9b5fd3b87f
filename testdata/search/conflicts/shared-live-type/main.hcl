# The dashboard tool wrote its own config type, with buildNum not_analyzed;
# a new declared type maps buildNum as an analyzed string.
project = "shared"

search "t1" {
  url          = "http://127.0.0.1:9200"
  cluster_name = "t1"
}

index "shared" {
  search = "t1"
  mapping "search" {
    properties = {
      title = "string"
    }
  }
  mapping "dashboard" {
    properties = {
      title    = "string"
      buildNum = "string"
    }
  }
}
