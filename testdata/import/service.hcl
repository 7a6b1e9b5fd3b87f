# The import block for the seed's gated-api registration made by hand; the
# golden plans of provision/consul read it beside specs/.

import {
  to = module.gated_api["edge"].service.gated-api-1
}
