{{/* Chart name, truncated to the 63 characters Kubernetes names allow. */}}
{{- define "outreach.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Release-scoped base name of every object. */}}
{{- define "outreach.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Labels on every object. */}}
{{- define "outreach.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "outreach.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: outreach
{{- end }}

{{/* Selector labels of one component. Call with (dict "root" $ "component" "gateway"). */}}
{{- define "outreach.selectorLabels" -}}
app.kubernetes.io/name: {{ include "outreach.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/* Name of one component's objects. */}}
{{- define "outreach.componentName" -}}
{{- printf "%s-%s" (include "outreach.fullname" .root) .component | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "outreach.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "outreach.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* Image of a component: its own override, else <repository>/<name>:<tag>. */}}
{{- define "outreach.image" -}}
{{- $img := .image | default dict }}
{{- $repo := $img.repository | default (printf "%s/%s" .root.Values.image.repository .name) }}
{{- $tag := $img.tag | default .root.Values.image.tag | default .root.Chart.AppVersion }}
{{- $ref := printf "%s:%s" $repo $tag }}
{{- /* A digest pins the exact build, whatever has been pushed over the tag since. */}}
{{- with $img.digest }}{{ $ref = printf "%s@%s" $ref . }}{{ end }}
{{- $ref }}
{{- end }}

{{/* The chart's Secret, whose keys hold every credential not taken from an existing Secret. */}}
{{- define "outreach.secretName" -}}
{{- include "outreach.fullname" . }}
{{- end }}

{{/*
A value kept across upgrades: the one already stored in the chart's Secret under `key`,
else `fallback`. `helm template` has no cluster, so there it is always `fallback`.
*/}}
{{- define "outreach.keptSecretValue" -}}
{{- $existing := lookup "v1" "Secret" .root.Release.Namespace (include "outreach.secretName" .root) }}
{{- if and $existing $existing.data (hasKey $existing.data .key) }}
{{- index $existing.data .key | b64dec }}
{{- else }}
{{- .fallback }}
{{- end }}
{{- end }}

{{- define "outreach.trialPostgresPassword" -}}
{{- if .Values.trial.postgresql.password }}
{{- .Values.trial.postgresql.password }}
{{- else }}
{{- include "outreach.keptSecretValue" (dict "root" . "key" "TRIAL_POSTGRES_PASSWORD" "fallback" (randAlphaNum 32)) }}
{{- end }}
{{- end }}

{{/*
The secret settings: env name -> values entry, and what a trial install uses when no value
is given. Returns YAML: {NAME: {item, trial?, generate?, optional?}}.
*/}}
{{- define "outreach.secretItems" -}}
DATABASE_URL:
  key: databaseUrl
  item: {{ toJson .Values.secrets.databaseUrl }}
  trial: true
REDIS_URL:
  key: redisUrl
  item: {{ toJson .Values.secrets.redisUrl }}
  trial: true
NATS_URL:
  key: natsUrl
  item: {{ toJson .Values.secrets.natsUrl }}
  trial: true
ADMIN_TOKEN:
  key: adminToken
  item: {{ toJson .Values.secrets.adminToken }}
  generate: true
INTERNAL_TOKEN:
  key: internalToken
  item: {{ toJson .Values.secrets.internalToken }}
  generate: true
INTERNAL_TOKEN_ALSO_ACCEPTED:
  key: internalTokenAlsoAccepted
  item: {{ toJson .Values.secrets.internalTokenAlsoAccepted }}
  optional: true
ASSISTANT_API_KEY:
  key: assistantApiKey
  item: {{ toJson .Values.secrets.assistantApiKey }}
  optional: true
{{- end }}

{{/*
Where the pod reads one secret variable: (dict "root" $ "name" "DATABASE_URL").
Renders nothing for an optional credential that is not configured.
*/}}
{{- define "outreach.secretEnvVar" -}}
{{- $items := include "outreach.secretItems" .root | fromYaml }}
{{- $entry := index $items .name }}
{{- if not $entry }}
{{- fail (printf "unknown secret variable %s in secretEnv (known: %s)" .name (keys $items | sortAlpha | join ", ")) }}
{{- end }}
{{- $item := $entry.item }}
{{- if $item.existingSecret }}
- name: {{ .name }}
  valueFrom:
    secretKeyRef:
      name: {{ $item.existingSecret }}
      key: {{ $item.existingSecretKey | default .name }}
{{- else if or $item.value (and $entry.trial .root.Values.trial.enabled) $entry.generate }}
- name: {{ .name }}
  valueFrom:
    secretKeyRef:
      name: {{ include "outreach.secretName" .root }}
      key: {{ .name }}
{{- else if not $entry.optional }}
{{- fail (printf "%s is not configured: set secrets.%s.value or secrets.%s.existingSecret, or trial.enabled" .name $entry.key $entry.key) }}
{{- end }}
{{- end }}

{{/* Address a gRPC client dials for a component serving on `port`. */}}
{{- define "outreach.grpcAddr" -}}
{{- $name := include "outreach.componentName" (dict "root" .root "component" .component) }}
{{- if eq .root.Values.config.grpcTarget "headless" }}
{{- printf "dns:///%s-headless:%v" $name .port }}
{{- else }}
{{- printf "%s:%v" $name .port }}
{{- end }}
{{- end }}

{{/* PUBLIC_BASE_URL: configured, else the first Ingress host. */}}
{{- define "outreach.publicBaseUrl" -}}
{{- if .Values.config.publicBaseUrl }}
{{- .Values.config.publicBaseUrl }}
{{- else if and .Values.ingress.enabled .Values.ingress.hosts }}
{{- $host := first .Values.ingress.hosts }}
{{- $tls := false }}
{{- range .Values.ingress.tls }}{{ if has $host .hosts }}{{ $tls = true }}{{ end }}{{ end }}
{{- printf "%s://%s" (ternary "https" "http" $tls) $host }}
{{- else }}
{{- fail "config.publicBaseUrl is required when the Ingress is disabled or has no host" }}
{{- end }}
{{- end }}

{{/* A service's shutdown deadline in ms: its own, else the chart's. Call with (dict "root" $ "component" name). */}}
{{- define "outreach.shutdownTimeoutMs" -}}
{{- (index .root.Values.services .component).shutdownTimeoutMs | default .root.Values.config.shutdownTimeoutMs }}
{{- end }}

{{/* Grace period: preStop sleep + the service's shutdown deadline + a margin, in seconds. */}}
{{- define "outreach.terminationGracePeriodSeconds" -}}
{{- $ms := include "outreach.shutdownTimeoutMs" . | int }}
{{- add .root.Values.preStopSleepSeconds (div (add $ms 999) 1000) .root.Values.terminationGraceMarginSeconds }}
{{- end }}

{{/*
The services that call each gRPC service (each reads that service's *_SERVICE_ADDR), as YAML:
{service: [clients]}. The gRPC port's NetworkPolicy admits only these; the deploy checks compare
the list with the services' config.
*/}}
{{- define "outreach.grpcClients" -}}
recipient-service: [gateway, link-runtime, campaign-service]
campaign-service: [gateway, recipient-service]
{{- end }}

{{/*
The services that open PostgreSQL pools (read with fromYaml).
*/}}
{{- define "outreach.postgresClients" -}}
clients: [link-runtime, campaign-service, recipient-service]
{{- end }}

{{/*
max_connections of the trial PostgreSQL: every pod that may run at once (each service's HPA
maximum, or its replicas, plus the rollout's 25 % surge) with a full pool and the one connection
it migrates on at start, plus 10 for the migration Job, an operator's psql and the superuser's
reserved slots.
*/}}
{{- define "outreach.trialPostgresMaxConnections" -}}
{{- $total := 10 }}
{{- range (include "outreach.postgresClients" . | fromYaml).clients }}
{{- $v := index $.Values.services . }}
{{- if $v.enabled }}
{{- $pods := int ($v.autoscaling.enabled | ternary $v.autoscaling.maxReplicas $v.replicas) }}
{{- $pods = add $pods (div (add (mul $pods 25) 99) 100) }}
{{- $pool := int ((index ($v.extraEnv | default dict) "DATABASE_POOL_SIZE") | default $.Values.config.databasePoolSize) }}
{{- $total = add $total (mul $pods (add $pool 1)) }}
{{- end }}
{{- end }}
{{- $total }}
{{- end }}

{{/*
NetworkPolicy peers matching this release's pods of the given components, as YAML {from: [...]}
(read with fromYaml): (dict "root" $ "components" (list "gateway" ...)).
*/}}
{{- define "outreach.peerComponents" -}}
from:
  - podSelector:
      matchLabels:
        app.kubernetes.io/name: {{ include "outreach.name" .root }}
        app.kubernetes.io/instance: {{ .root.Release.Name }}
      matchExpressions:
        - key: app.kubernetes.io/component
          operator: In
          values: {{ toJson .components }}
{{- end }}

{{/*
A NetworkPolicy admitting ingress to one component's pods only as the rules say; egress stays
open. Call with (dict "root" $ "component" "redis" "rules" <YAML list of ingress rules>).
*/}}
{{- define "outreach.networkPolicy" -}}
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ include "outreach.componentName" . }}
  labels:
    {{- include "outreach.labels" .root | nindent 4 }}
    app.kubernetes.io/component: {{ .component }}
spec:
  podSelector:
    matchLabels:
      {{- include "outreach.selectorLabels" . | nindent 6 }}
  policyTypes: [Ingress]
  ingress:
    {{- .rules | nindent 4 }}
{{- end }}

{{/*
A Kubernetes quantity ("256Mi", "1Gi", "500M", a plain number) in bytes, as an integer.
*/}}
{{- define "outreach.quantityBytes" -}}
{{- if kindIs "string" . }}
{{- $number := regexFind "^[0-9.]+" . }}
{{- $units := dict "" 1 "k" 1000 "M" 1000000 "G" 1000000000 "T" 1000000000000 "Ki" 1024 "Mi" 1048576 "Gi" 1073741824 "Ti" 1099511627776 "m" 0.001 }}
{{- $unit := trimPrefix $number . }}
{{- if not (hasKey $units $unit) }}{{ fail (printf "cannot read the quantity %q" .) }}{{ end }}
{{- mulf (float64 $number) (get $units $unit) | int64 }}
{{- else }}
{{- int64 . }}
{{- end }}
{{- end }}

{{/*
The trial Redis's maxmemory in bytes: 80 % of its memory limit, so that at a full memory it
refuses writes (noeviction) rather than being OOM-killed with every chat history in it; the rest
is left for its own overhead (fragmentation, client buffers). Empty without a memory limit.
*/}}
{{- define "outreach.trialRedisMaxmemory" -}}
{{- $limit := dig "resources" "limits" "memory" "" .Values.trial.redis }}
{{- if $limit }}
{{- div (mul (include "outreach.quantityBytes" $limit | int64) 4) 5 }}
{{- end }}
{{- end }}
