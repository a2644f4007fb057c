import json
PROM={"type":"prometheus","uid":"prometheus"}
LOKI={"type":"loki","uid":"loki"}
def panel(pid,title,exprs,x,y,w=12,h=8,kind="timeseries",unit=None,legend=None,ds=PROM,desc=None):
    targets=[]
    for i,e in enumerate(exprs):
        expr,leg = (e if isinstance(e,tuple) else (e,legend))
        t={"refId":chr(65+i),"datasource":ds,"expr":expr}
        if leg: t["legendFormat"]=leg
        targets.append(t)
    p={"id":pid,"type":kind,"title":title,"datasource":ds,"gridPos":{"x":x,"y":y,"w":w,"h":h},"targets":targets,
       "fieldConfig":{"defaults":{"unit":unit} if unit else {},"overrides":[]},"options":{}}
    if desc: p["description"]=desc
    return p
def dash(uid,title,panels,templating=None,tags=None):
    return {"uid":uid,"title":title,"tags":tags or ["mcp-fleet"],"timezone":"browser","schemaVersion":39,"version":1,
            "editable":True,"refresh":"10s","time":{"from":"now-1h","to":"now"},
            "templating":{"list":templating or []},"annotations":{"list":[]},"panels":panels}
R="$__rate_interval"
overview=dash("mcp-fleet-overview","mcp-fleet: fleet overview",[
 panel(1,"Services up",['sum(up{job="mcp-fleet"})'],0,0,6,4,"stat",desc="Services Prometheus scrapes successfully."),
 panel(2,"Services down",['count(up{job="mcp-fleet"} == 0) or vector(0)'],6,0,6,4,"stat"),
 panel(3,"Tool calls per second",[f'sum(rate(mcp_fleet_tool_calls_total[{R}]))'],12,0,6,4,"stat",unit="reqps"),
 panel(4,"Open breakers",['sum(mcp_fleet_downstream_breaker_open)'],18,0,6,4,"stat"),
 panel(5,"Requests per second by service",[f'sum by (service) (rate(mcp_fleet_http_requests_total[{R}]))'],0,4,unit="reqps",legend="{{service}}"),
 panel(6,"Server errors (5xx) ratio by service",[f'(sum by (service) (rate(mcp_fleet_http_requests_total{{status=~"5.."}}[{R}])) or 0 * sum by (service) (rate(mcp_fleet_http_requests_total[{R}]))) / sum by (service) (rate(mcp_fleet_http_requests_total[{R}]))'],12,4,unit="percentunit",legend="{{service}}",
       desc="0 for a service that answers no 5xx."),
 panel(7,"Tool call p99 by service",[f'histogram_quantile(0.99, sum by (service, le) (rate(mcp_fleet_tool_call_duration_seconds_bucket[{R}])))'],0,12,unit="s",legend="{{service}}"),
 panel(8,"Tool calls by outcome",[f'sum by (outcome) (rate(mcp_fleet_tool_calls_total[{R}]))'],12,12,unit="reqps",legend="{{outcome}}"),
 panel(9,"Resident memory by service",['sum by (service) (mcp_fleet_process_resident_memory_bytes)'],0,20,unit="bytes",legend="{{service}}"),
 panel(10,"Scrape up by service",['up{job="mcp-fleet"}'],12,20,kind="state-timeline",legend="{{service}}"),
])
gateway=dash("mcp-fleet-gateway","mcp-fleet: gateway",[
 panel(1,"Calls per second by downstream",[f'sum by (downstream) (rate(mcp_fleet_gateway_calls_total[{R}]))'],0,0,unit="reqps",legend="{{downstream}}"),
 panel(2,"Calls by outcome",[f'sum by (outcome) (rate(mcp_fleet_gateway_calls_total[{R}]))'],12,0,unit="reqps",legend="{{outcome}}"),
 panel(3,"Gateway call latency",[(f'histogram_quantile(0.5, sum by (le) (rate(mcp_fleet_gateway_call_duration_seconds_bucket[{R}])))',"p50"),(f'histogram_quantile(0.99, sum by (le) (rate(mcp_fleet_gateway_call_duration_seconds_bucket[{R}])))',"p99")],0,8,unit="s"),
 panel(4,"Downstreams up",['mcp_fleet_downstream_up'],12,8,kind="state-timeline",legend="{{downstream}}"),
 panel(5,"Breakers open",['mcp_fleet_downstream_breaker_open'],0,16,kind="state-timeline",legend="{{downstream}}"),
 panel(6,"Tools per downstream",['mcp_fleet_downstream_tools'],12,16,kind="bargauge",legend="{{downstream}}"),
 panel(7,"Call-history queue",[('mcp_fleet_gateway_history_queue_length',"queued"),('mcp_fleet_gateway_history_queue_capacity',"capacity")],0,24),
 panel(8,"Gateway heap used",['mcp_fleet_nodejs_heap_size_used_bytes{service="mega-orchestrator"}'],12,24,unit="bytes"),
 panel(9,"Gateway logs",['{service="mega-orchestrator"}'],0,32,24,8,kind="logs",ds=LOKI),
])
svcvar={"name":"service","label":"Service","type":"query","datasource":PROM,"query":{"query":'label_values(up{job="mcp-fleet"}, service)',"refId":"service"},
        "definition":'label_values(up{job="mcp-fleet"}, service)',"refresh":2,"current":{"text":"system-mcp","value":"system-mcp"},"includeAll":False,"multi":False}
S='service="$service"'
service=dash("mcp-fleet-service","mcp-fleet: service",[
 panel(1,"Requests per second by route",[f'sum by (method, route) (rate(mcp_fleet_http_requests_total{{{S}}}[{R}]))'],0,0,unit="reqps",legend="{{method}} {{route}}"),
 panel(2,"Request latency p99 by route",[f'histogram_quantile(0.99, sum by (route, le) (rate(mcp_fleet_http_request_duration_seconds_bucket{{{S}}}[{R}])))'],12,0,unit="s",legend="{{route}}"),
 panel(3,"Tool calls by tool and outcome",[f'sum by (tool, outcome) (rate(mcp_fleet_tool_calls_total{{{S}}}[{R}]))'],0,8,unit="reqps",legend="{{tool}} {{outcome}}"),
 panel(4,"Tool latency p50 by tool",[f'histogram_quantile(0.5, sum by (tool, le) (rate(mcp_fleet_tool_call_duration_seconds_bucket{{{S}}}[{R}])))'],12,8,unit="s",legend="{{tool}}"),
 panel(5,"CPU",[f'rate(mcp_fleet_process_cpu_seconds_total{{{S}}}[{R}])'],0,16,unit="percentunit"),
 panel(6,"Resident memory",[f'mcp_fleet_process_resident_memory_bytes{{{S}}}'],12,16,unit="bytes"),
 panel(7,"Event loop lag p99",[f'mcp_fleet_nodejs_eventloop_lag_p99_seconds{{{S}}}'],0,24,unit="s"),
 panel(8,"Logs",['{service="$service"}'],12,24,kind="logs",ds=LOKI),
],templating=[svcvar])
for name,d in [("fleet-overview",overview),("gateway",gateway),("service",service)]:
    open(f"dashboards/{name}.json","w").write(json.dumps(d,indent=2)+"\n")
