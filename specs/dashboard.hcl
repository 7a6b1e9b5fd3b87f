# Area B: the dashboard tool's saved objects live in .dashboard, created by
# hand on one member cluster because the tribe node it reads through is
# read-only. The fields and types are the seed's.

variable "search_url" {
  type        = string
  default     = null
  description = "A node of member cluster t1, where the writes go (unset: ELASTICSEARCH_URL, or else http://127.0.0.1:9200)."
}

variable "tribe_url" {
  type        = string
  default     = null
  description = "The read-only tribe node, to check the result through (optional)."
}

search "t1" {
  url          = var.search_url
  cluster_name = "t1"
  tribe_url    = var.tribe_url
}

index ".dashboard" {
  search = "t1"

  mapping "index-pattern" {
    properties = {
      title         = "string"
      timeFieldName = "string"
      intervalName  = "string"
      customFormats = "string"
      fields        = "string"
    }
  }

  mapping "search" {
    properties = {
      title       = "string"
      description = "string"
      hits        = "integer"
      columns     = "string"
      sort        = "string"
      version     = "integer"

      "dashboardSavedObjectMeta.searchSourceJSON" = "string"
    }
  }

  mapping "dashboard" {
    properties = {
      title       = "string"
      hits        = "integer"
      description = "string"
      panelsJSON  = "string"
      version     = "integer"

      "dashboardSavedObjectMeta.searchSourceJSON" = "string"
    }
  }

  mapping "visualization" {
    properties = {
      title         = "string"
      visState      = "string"
      description   = "string"
      savedSearchId = "string"
      version       = "integer"

      "dashboardSavedObjectMeta.searchSourceJSON" = "string"
    }
  }
}
