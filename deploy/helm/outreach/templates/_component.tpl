{{/*
Everything one service needs: Deployment, Service (+ headless Service for gRPC), PDB, HPA,
ServiceMonitor and NetworkPolicy. Call with (dict "root" $ "component" "gateway"); each service's
own template file makes that call, so every service stays visible in templates/.
*/}}
{{- define "outreach.component" -}}
{{- $root := .root }}
{{- $component := .component }}
{{- $v := index $root.Values.services $component }}
{{- if $v.enabled }}
{{- $name := include "outreach.componentName" . }}
{{- $selector := include "outreach.selectorLabels" . }}
{{- $metricsPort := $root.Values.metrics.port }}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ $name }}
  labels:
    {{- include "outreach.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ $component }}
spec:
  {{- if not $v.autoscaling.enabled }}
  replicas: {{ $v.replicas }}
  {{- end }}
  revisionHistoryLimit: 5
  selector:
    matchLabels:
      {{- $selector | nindent 6 }}
  strategy:
    type: RollingUpdate
    rollingUpdate:
      # Surge first, never drop below the wanted count: readiness gates the new pods.
      maxSurge: 25%
      maxUnavailable: 0
  template:
    metadata:
      labels:
        {{- include "outreach.labels" $root | nindent 8 }}
        app.kubernetes.io/component: {{ $component }}
        {{- with $root.Values.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        # Roll the pods when configuration or credentials change.
        checksum/config: {{ include (print $root.Template.BasePath "/configmap.yaml") $root | sha256sum }}
        checksum/secret: {{ include (print $root.Template.BasePath "/secret.yaml") $root | sha256sum }}
        {{- if $root.Values.metrics.podAnnotations }}
        prometheus.io/scrape: "true"
        prometheus.io/port: {{ $metricsPort | quote }}
        prometheus.io/path: /metrics
        {{- end }}
        {{- with $root.Values.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      serviceAccountName: {{ include "outreach.serviceAccountName" $root }}
      automountServiceAccountToken: false
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        {{- toYaml (merge (dict) ($v.podSecurityContext | default dict) $root.Values.podSecurityContext) | nindent 8 }}
      terminationGracePeriodSeconds: {{ include "outreach.terminationGracePeriodSeconds" . }}
      containers:
        - name: {{ $component }}
          image: {{ include "outreach.image" (dict "root" $root "name" $component "image" $v.image) }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          command: [node]
          args:
            {{- /* A service's own list wins, an empty one included. */}}
            {{- range (hasKey $v "nodeFlags" | ternary $v.nodeFlags $root.Values.nodeFlags) }}
            - {{ . | quote }}
            {{- end }}
            - --require
            - "@outreach/platform/dist/instrumentation.js"
            - {{ printf "%s/dist/main.js" $component }}
          ports:
            {{- if $v.httpPort }}
            - name: http
              containerPort: {{ $v.httpPort }}
              protocol: TCP
            {{- end }}
            {{- if $v.grpcPort }}
            - name: grpc
              containerPort: {{ $v.grpcPort }}
              protocol: TCP
            {{- end }}
            - name: metrics
              containerPort: {{ $metricsPort }}
              protocol: TCP
          envFrom:
            - configMapRef:
                name: {{ include "outreach.fullname" $root }}
          env:
            - name: OTEL_SERVICE_NAME
              value: {{ $component | quote }}
            - name: POD_NAME
              valueFrom:
                fieldRef:
                  fieldPath: metadata.name
            {{- with $v.accessLog }}
            - name: ACCESS_LOG
              value: {{ . | quote }}
            {{- end }}
            {{- with $v.shutdownTimeoutMs }}
            - name: SHUTDOWN_TIMEOUT_MS
              value: {{ . | quote }}
            {{- end }}
            {{- range $v.secretEnv }}
            {{- with include "outreach.secretEnvVar" (dict "root" $root "name" .) | trim }}
            {{- . | nindent 12 }}
            {{- end }}
            {{- end }}
            {{- /* Every service: its gRPC calls carry it, its gRPC server requires it. */}}
            {{- include "outreach.secretEnvVar" (dict "root" $root "name" "INTERNAL_TOKEN") | trim | nindent 12 }}
            {{- /* The gRPC servers only: it is accepted, never sent; nothing while no rotation runs. */}}
            {{- if $v.grpcPort }}
            {{- with include "outreach.secretEnvVar" (dict "root" $root "name" "INTERNAL_TOKEN_ALSO_ACCEPTED") | trim }}
            {{- . | nindent 12 }}
            {{- end }}
            {{- end }}
            {{- if $root.Values.grpcTls.enabled }}
            {{- /* Every service calls over TLS (unless clients: false, a rollout's first step); the gRPC servers serve with the certificate. */}}
            {{- $caFile := "/etc/outreach/grpc-tls/ca.crt" }}
            {{- with $root.Values.grpcTls.caBundle.configMap }}
            {{- $caFile = printf "/etc/outreach/grpc-ca/%s" $root.Values.grpcTls.caBundle.key }}
            {{- end }}
            {{- if $root.Values.grpcTls.clients }}
            - name: GRPC_TLS_CA_FILE
              value: {{ $caFile }}
            {{- if $root.Values.grpcTls.clientCertificates }}
            {{- /* Mutual TLS: the callers present the Secret's certificate, made for client authentication too. */}}
            - name: GRPC_TLS_CLIENT_CERT_FILE
              value: /etc/outreach/grpc-tls/tls.crt
            - name: GRPC_TLS_CLIENT_KEY_FILE
              value: /etc/outreach/grpc-tls/tls.key
            {{- end }}
            {{- end }}
            {{- if $v.grpcPort }}
            - name: GRPC_TLS_CERT_FILE
              value: /etc/outreach/grpc-tls/tls.crt
            - name: GRPC_TLS_KEY_FILE
              value: /etc/outreach/grpc-tls/tls.key
            {{- if $root.Values.grpcTls.acceptPlaintext }}
            - name: GRPC_TLS_ACCEPT_PLAINTEXT
              value: "true"
            {{- end }}
            {{- if $root.Values.grpcTls.requireClientCertificates }}
            - name: GRPC_TLS_CLIENT_CA_FILE
              value: {{ $caFile }}
            {{- if $root.Values.grpcTls.checkClientNames }}
            {{- /* Only this server's callers, by the names their own certificates bear (secretNames). */}}
            {{- $callers := list }}
            {{- range index (include "outreach.grpcClients" $root | fromYaml) $component }}
            {{- $callers = append $callers (include "outreach.componentName" (dict "root" $root "component" .)) }}
            {{- end }}
            - name: GRPC_TLS_CLIENT_NAMES
              value: {{ join "," $callers | quote }}
            {{- end }}
            {{- end }}
            {{- end }}
            {{- end }}
            {{- range $k, $val := $v.extraEnv }}
            - name: {{ $k }}
              value: {{ $val | toString | quote }}
            {{- end }}
          {{- if or $v.httpPort $root.Values.grpcTls.enabled }}
          {{- $probePort := "http" }}
          {{- if not $v.httpPort }}
          {{- $probePort = "metrics" }}
          {{- end }}
          # /livez while the process works, /readyz until shutdown begins; a shared store out of
          # reach does not make a replica unready (operations.md). A gRPC-only service over TLS,
          # which the kubelet's gRPC probe does not speak, answers them on its metrics port.
          startupProbe:
            httpGet: { path: /livez, port: {{ $probePort }} }
            periodSeconds: 2
            failureThreshold: 60
          livenessProbe:
            httpGet: { path: /livez, port: {{ $probePort }} }
            periodSeconds: 10
            timeoutSeconds: 3
            failureThreshold: 3
          readinessProbe:
            httpGet: { path: /readyz, port: {{ $probePort }} }
            periodSeconds: 5
            timeoutSeconds: 3
            failureThreshold: 2
          {{- else }}
          # gRPC-only: the kubelet calls grpc.health.v1.Health/Check (overall status "").
          startupProbe:
            grpc: { port: {{ $v.grpcPort }} }
            periodSeconds: 2
            failureThreshold: 60
          livenessProbe:
            grpc: { port: {{ $v.grpcPort }} }
            periodSeconds: 10
            timeoutSeconds: 3
            failureThreshold: 3
          readinessProbe:
            grpc: { port: {{ $v.grpcPort }} }
            periodSeconds: 5
            timeoutSeconds: 3
            failureThreshold: 2
          {{- end }}
          lifecycle:
            # Keep serving while the endpoint removal reaches kube-proxy and the Ingress;
            # SIGTERM (graceful drain within SHUTDOWN_TIMEOUT_MS) follows.
            preStop:
              exec:
                command: [sleep, {{ $root.Values.preStopSleepSeconds | quote }}]
          resources:
            {{- toYaml $v.resources | nindent 12 }}
          securityContext:
            {{- toYaml $root.Values.containerSecurityContext | nindent 12 }}
          volumeMounts:
            - name: tmp
              mountPath: /tmp
            {{- if $root.Values.grpcTls.enabled }}
            - name: grpc-tls
              mountPath: /etc/outreach/grpc-tls
              readOnly: true
            {{- if $root.Values.grpcTls.caBundle.configMap }}
            - name: grpc-ca
              mountPath: /etc/outreach/grpc-ca
              readOnly: true
            {{- end }}
            {{- end }}
            {{- with $v.extraVolumeMounts }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
      volumes:
        - name: tmp
          emptyDir:
            sizeLimit: 64Mi
        {{- if $root.Values.grpcTls.enabled }}
        - name: grpc-tls
          secret:
            secretName: {{ index ($root.Values.grpcTls.secretNames | default dict) $component | default $root.Values.grpcTls.secretName }}
        {{- if $root.Values.grpcTls.caBundle.configMap }}
        - name: grpc-ca
          configMap:
            name: {{ $root.Values.grpcTls.caBundle.configMap }}
        {{- end }}
        {{- end }}
        {{- with $v.extraVolumes }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- with ($v.nodeSelector | default $root.Values.nodeSelector) }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with ($v.tolerations | default $root.Values.tolerations) }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with ($v.affinity | default $root.Values.affinity) }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- if $root.Values.topologySpread }}
      topologySpreadConstraints:
        - maxSkew: 1
          topologyKey: kubernetes.io/hostname
          whenUnsatisfiable: ScheduleAnyway
          labelSelector:
            matchLabels:
              {{- $selector | nindent 14 }}
        - maxSkew: 1
          topologyKey: topology.kubernetes.io/zone
          whenUnsatisfiable: ScheduleAnyway
          labelSelector:
            matchLabels:
              {{- $selector | nindent 14 }}
      {{- end }}
---
apiVersion: v1
kind: Service
metadata:
  name: {{ $name }}
  labels:
    {{- include "outreach.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ $component }}
spec:
  type: ClusterIP
  selector:
    {{- $selector | nindent 4 }}
  ports:
    {{- if $v.httpPort }}
    - name: http
      port: {{ $v.httpPort }}
      targetPort: http
      protocol: TCP
    {{- end }}
    {{- if $v.grpcPort }}
    - name: grpc
      port: {{ $v.grpcPort }}
      targetPort: grpc
      protocol: TCP
      appProtocol: grpc
    {{- end }}
    - name: metrics
      port: {{ $metricsPort }}
      targetPort: metrics
      protocol: TCP
{{- if $v.grpcPort }}
---
# Every ready pod's address, for gRPC clients that balance per call (config.grpcTarget: headless).
apiVersion: v1
kind: Service
metadata:
  name: {{ $name }}-headless
  labels:
    {{- include "outreach.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ $component }}
spec:
  clusterIP: None
  selector:
    {{- $selector | nindent 4 }}
  ports:
    - name: grpc
      port: {{ $v.grpcPort }}
      targetPort: grpc
      protocol: TCP
      appProtocol: grpc
{{- end }}
{{- if $v.pdb.enabled }}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ $name }}
  labels:
    {{- include "outreach.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ $component }}
spec:
  {{- if hasKey $v.pdb "minAvailable" }}
  minAvailable: {{ $v.pdb.minAvailable }}
  {{- else }}
  maxUnavailable: {{ $v.pdb.maxUnavailable | default 1 }}
  {{- end }}
  selector:
    matchLabels:
      {{- $selector | nindent 6 }}
{{- end }}
{{- if $v.autoscaling.enabled }}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {{ $name }}
  labels:
    {{- include "outreach.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ $component }}
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {{ $name }}
  minReplicas: {{ $v.autoscaling.minReplicas }}
  maxReplicas: {{ $v.autoscaling.maxReplicas }}
  metrics:
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: {{ $v.autoscaling.targetCPUUtilizationPercentage }}
    {{- with $v.autoscaling.targetMemoryUtilizationPercentage }}
    - type: Resource
      resource:
        name: memory
        target:
          type: Utilization
          averageUtilization: {{ . }}
    {{- end }}
  behavior:
    scaleDown:
      # Avoid flapping after a burst of link openings.
      stabilizationWindowSeconds: 300
      policies:
        - type: Percent
          value: 50
          periodSeconds: 60
{{- end }}
{{- if $root.Values.metrics.serviceMonitor.enabled }}
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: {{ $name }}
  labels:
    {{- include "outreach.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ $component }}
    {{- with $root.Values.metrics.serviceMonitor.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  selector:
    matchLabels:
      {{- $selector | nindent 6 }}
  endpoints:
    - port: metrics
      path: /metrics
      interval: {{ $root.Values.metrics.serviceMonitor.interval }}
      scrapeTimeout: {{ $root.Values.metrics.serviceMonitor.scrapeTimeout }}
      relabelings:
        # The target's `service` label is the Kubernetes Service name by default; make it the
        # component name, which is also the `service` label every metric carries.
        - sourceLabels: [__meta_kubernetes_service_label_app_kubernetes_io_component]
          targetLabel: service
{{- end }}
{{- if $root.Values.networkPolicy.enabled }}
{{- $np := $root.Values.networkPolicy }}
{{- $rules := list }}
{{- if $v.httpPort }}
{{- $http := dict "ports" (list (dict "port" "http" "protocol" "TCP")) }}
{{- with $np.httpFrom }}{{ $_ := set $http "from" . }}{{ end }}
{{- $rules = append $rules $http }}
{{- end }}
{{- with index (include "outreach.grpcClients" $root | fromYaml) $component }}
{{- $from := (include "outreach.peerComponents" (dict "root" $root "components" .) | fromYaml).from }}
{{- $rules = append $rules (dict "ports" (list (dict "port" "grpc" "protocol" "TCP")) "from" $from) }}
{{- end }}
{{- $metrics := dict "ports" (list (dict "port" "metrics" "protocol" "TCP")) }}
{{- with $np.metricsFrom }}{{ $_ := set $metrics "from" . }}{{ end }}
{{- $rules = append $rules $metrics }}
---
{{ include "outreach.networkPolicy" (dict "root" $root "component" $component "rules" (toYaml $rules)) }}
{{- end }}
{{- end }}
{{- end }}
