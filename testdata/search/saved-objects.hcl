# The seed's four saved objects as HCL, as specs/ declared them before its
# gated API became a module that reads each team's from JSON files: the
# search backend's tests plan them beside specs/project.hcl and
# dashboard.hcl. An object field of a string mapping is stored as JSON text
# and compared as JSON; references (document.<type>.<label>.id) are
# checked and order the writes: the index pattern, the search, the
# visualization, the dashboard.

document "index-pattern" "logs" {
  id = "logs-*"
  source = {
    title         = "logs-*"
    timeFieldName = "@timestamp"
    fields = [
      { name = "@timestamp", type = "date", count = 0, scripted = false, indexed = true, analyzed = false, doc_values = true },
      { name = "level", type = "string", count = 0, scripted = false, indexed = true, analyzed = false, doc_values = true },
    ]
  }
}

document "search" "errors" {
  source = {
    title   = "Errors"
    hits    = 0
    columns = ["level", "message"]
    sort    = ["@timestamp", "desc"]
    version = 1

    "dashboardSavedObjectMeta.searchSourceJSON" = {
      index     = document.index-pattern.logs.id
      query     = { query_string = { query = "level:error", analyze_wildcard = true } }
      filter    = []
      highlight = {}
    }
  }
}

document "visualization" "error-rate" {
  source = {
    title         = "Error rate"
    description   = ""
    savedSearchId = document.search.errors.id
    version       = 1
    visState = {
      title     = "Error rate"
      type      = "line"
      params    = { shareYAxis = true, addTooltip = true, addLegend = true, showCircles = true, interpolate = "linear" }
      aggs      = [{ id = "1", type = "count", schema = "metric", params = {} }, { id = "2", type = "date_histogram", schema = "segment", params = { field = "@timestamp", interval = "auto", min_doc_count = 1, extended_bounds = {} } }]
      listeners = {}
    }

    "dashboardSavedObjectMeta.searchSourceJSON" = { filter = [] }
  }
}

document "dashboard" "edge" {
  source = {
    title       = "Edge"
    hits        = 0
    description = "The gated API's errors."
    version     = 1
    panelsJSON  = [{ id = document.visualization.error-rate.id, type = "visualization", panelIndex = 1, col = 1, row = 1, size_x = 6, size_y = 3 }]

    "dashboardSavedObjectMeta.searchSourceJSON" = { filter = [{ query = { query_string = { query = "*", analyze_wildcard = true } } }] }
  }
}
