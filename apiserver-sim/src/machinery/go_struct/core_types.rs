//! The layout of kube-apiserver's internal `core` types that field errors print (a pod spec
//! and what it holds): each type's Go fields in declaration order, with their kinds. The
//! JSON name of a field in the served (v1) form is its Go name with the leading initialism
//! in lower case (`DNSPolicy` → `dnsPolicy`, `TTY` → `tty`), unless written `Go=json`.
//!
//! Kinds: `s` string, `i` integer, `b` bool, `q` a `resource.Quantity`, `io` an
//! `IntOrString`, `map` a Go map, `sel` a `metav1.LabelSelector`, `*T` a pointer, `[]T` a
//! slice, `T` a struct, `~T` an embedded struct (its fields promoted), `~meta` an embedded
//! `metav1.ObjectMeta` (its JSON-tagged fields, empty ones left out).

/// One line per type: `Name: Field:kind Field:kind …`.
pub(super) const TYPES: &str = "
PodTemplateSpec: ~meta Spec:PodSpec
PodSpec: Volumes:[]Volume InitContainers:[]Container Containers:[]Container EphemeralContainers:[]EphemeralContainer RestartPolicy:s TerminationGracePeriodSeconds:*i ActiveDeadlineSeconds:*i DNSPolicy:s NodeSelector:map ServiceAccountName:s AutomountServiceAccountToken:*b NodeName:s SecurityContext:*PodSecurityContext ImagePullSecrets:[]LocalObjectReference Hostname:s Subdomain:s SetHostnameAsFQDN:*b Affinity:*Affinity SchedulerName:s Tolerations:[]Toleration HostAliases:[]HostAlias PriorityClassName:s Priority:*i PreemptionPolicy:*s DNSConfig:*PodDNSConfig ReadinessGates:[]PodReadinessGate RuntimeClassName:*s Overhead:map EnableServiceLinks:*b TopologySpreadConstraints:[]TopologySpreadConstraint OS:*PodOS SchedulingGates:[]PodSchedulingGate ResourceClaims:[]PodResourceClaim Resources:*ResourceRequirements HostnameOverride:*s SchedulingGroup:*PodSchedulingGroup
Volume: Name:s ~VolumeSource
VolumeSource: HostPath:*HostPathVolumeSource EmptyDir:*EmptyDirVolumeSource GCEPersistentDisk:*Opaque AWSElasticBlockStore:*Opaque GitRepo:*Opaque Secret:*SecretVolumeSource NFS:*Opaque ISCSI:*Opaque Glusterfs:*Opaque PersistentVolumeClaim:*PersistentVolumeClaimVolumeSource RBD:*Opaque Quobyte:*Opaque FlexVolume:*Opaque Cinder:*Opaque CephFS:*Opaque Flocker:*Opaque DownwardAPI:*DownwardAPIVolumeSource FC:*Opaque AzureFile:*Opaque ConfigMap:*ConfigMapVolumeSource VsphereVolume:*Opaque AzureDisk:*Opaque PhotonPersistentDisk:*Opaque Projected:*ProjectedVolumeSource PortworxVolume:*Opaque ScaleIO:*Opaque StorageOS:*Opaque CSI:*CSIVolumeSource Ephemeral:*EphemeralVolumeSource Image:*ImageVolumeSource
HostPathVolumeSource: Path:s Type:*s
EmptyDirVolumeSource: Medium:s SizeLimit:*q
SecretVolumeSource: SecretName:s Items:[]KeyToPath DefaultMode:*i Optional:*b
ConfigMapVolumeSource: ~LocalObjectReference Items:[]KeyToPath DefaultMode:*i Optional:*b
KeyToPath: Key:s Path:s Mode:*i
DownwardAPIVolumeSource: Items:[]DownwardAPIVolumeFile DefaultMode:*i
DownwardAPIVolumeFile: Path:s FieldRef:*ObjectFieldSelector ResourceFieldRef:*ResourceFieldSelector Mode:*i
ProjectedVolumeSource: Sources:[]VolumeProjection DefaultMode:*i
VolumeProjection: Secret:*SecretProjection DownwardAPI:*DownwardAPIProjection ConfigMap:*ConfigMapProjection ServiceAccountToken:*ServiceAccountTokenProjection ClusterTrustBundle:*Opaque PodCertificate:*Opaque
SecretProjection: ~LocalObjectReference Items:[]KeyToPath Optional:*b
ConfigMapProjection: ~LocalObjectReference Items:[]KeyToPath Optional:*b
DownwardAPIProjection: Items:[]DownwardAPIVolumeFile
ServiceAccountTokenProjection: Audience:s ExpirationSeconds:i Path:s
CSIVolumeSource: Driver:s ReadOnly:*b FSType:*s VolumeAttributes:map NodePublishSecretRef:*LocalObjectReference
ImageVolumeSource: Reference:s PullPolicy:s
PersistentVolumeClaimVolumeSource: ClaimName:s ReadOnly:b
EphemeralVolumeSource: VolumeClaimTemplate:*PersistentVolumeClaimTemplate
PersistentVolumeClaimTemplate: ~meta Spec:PersistentVolumeClaimSpec
PersistentVolumeClaimSpec: AccessModes:[]s Selector:*sel Resources:VolumeResourceRequirements VolumeName:s StorageClassName:*s VolumeMode:*s DataSource:*TypedLocalObjectReference DataSourceRef:*TypedObjectReference VolumeAttributesClassName:*s
VolumeResourceRequirements: Limits:map Requests:map
TypedLocalObjectReference: APIGroup:*s Kind:s Name:s
TypedObjectReference: APIGroup:*s Kind:s Name:s Namespace:*s
Container: Name:s Image:s Command:[]s Args:[]s WorkingDir:s Ports:[]ContainerPort EnvFrom:[]EnvFromSource Env:[]EnvVar Resources:ResourceRequirements ResizePolicy:[]ContainerResizePolicy RestartPolicy:*s RestartPolicyRules:[]ContainerRestartRule VolumeMounts:[]VolumeMount VolumeDevices:[]VolumeDevice LivenessProbe:*Probe ReadinessProbe:*Probe StartupProbe:*Probe Lifecycle:*Lifecycle TerminationMessagePath:s TerminationMessagePolicy:s ImagePullPolicy:s SecurityContext:*SecurityContext Stdin:b StdinOnce:b TTY:b
EphemeralContainer: ~Container TargetContainerName:s
ContainerPort: Name:s HostPort:i ContainerPort:i Protocol:s HostIP:s
EnvFromSource: Prefix:s ConfigMapRef:*ConfigMapEnvSource SecretRef:*SecretEnvSource
ConfigMapEnvSource: ~LocalObjectReference Optional:*b
SecretEnvSource: ~LocalObjectReference Optional:*b
EnvVar: Name:s Value:s ValueFrom:*EnvVarSource
EnvVarSource: FieldRef:*ObjectFieldSelector ResourceFieldRef:*ResourceFieldSelector ConfigMapKeyRef:*ConfigMapKeySelector SecretKeyRef:*SecretKeySelector FileKeyRef:*FileKeySelector
ObjectFieldSelector: APIVersion:s FieldPath:s
ResourceFieldSelector: ContainerName:s Resource:s Divisor:q
ConfigMapKeySelector: ~LocalObjectReference Key:s Optional:*b
SecretKeySelector: ~LocalObjectReference Key:s Optional:*b
FileKeySelector: VolumeName:s Path:s Key:s Optional:*b
ResourceRequirements: Limits:map Requests:map Claims:[]ResourceClaim
ResourceClaim: Name:s Request:s
ContainerResizePolicy: ResourceName:s RestartPolicy:s
ContainerRestartRule: Action:s ExitCodes:*ContainerRestartRuleOnExitCodes
ContainerRestartRuleOnExitCodes: Operator:s Values:[]i
VolumeMount: Name:s ReadOnly:b RecursiveReadOnly:*s MountPath:s SubPath:s MountPropagation:*s SubPathExpr:s
VolumeDevice: Name:s DevicePath:s
Probe: ~ProbeHandler InitialDelaySeconds:i TimeoutSeconds:i PeriodSeconds:i SuccessThreshold:i FailureThreshold:i TerminationGracePeriodSeconds:*i
ProbeHandler: Exec:*ExecAction HTTPGet:*HTTPGetAction TCPSocket:*TCPSocketAction GRPC:*GRPCAction
Lifecycle: PostStart:*LifecycleHandler PreStop:*LifecycleHandler StopSignal:*s
LifecycleHandler: Exec:*ExecAction HTTPGet:*HTTPGetAction TCPSocket:*TCPSocketAction Sleep:*SleepAction
ExecAction: Command:[]s
HTTPGetAction: Path:s Port:io Host:s Scheme:s HTTPHeaders:[]HTTPHeader
HTTPHeader: Name:s Value:s
TCPSocketAction: Port:io Host:s
GRPCAction: Port:i Service:*s
SleepAction: Seconds:i
SecurityContext: Capabilities:*Capabilities Privileged:*b SELinuxOptions:*SELinuxOptions WindowsOptions:*WindowsSecurityContextOptions RunAsUser:*i RunAsGroup:*i RunAsNonRoot:*b ReadOnlyRootFilesystem:*b AllowPrivilegeEscalation:*b ProcMount:*s SeccompProfile:*SeccompProfile AppArmorProfile:*AppArmorProfile
Capabilities: Add:[]s Drop:[]s
PodSecurityContext: HostNetwork:b HostPID:b HostIPC:b ShareProcessNamespace:*b HostUsers:*b SELinuxOptions:*SELinuxOptions WindowsOptions:*WindowsSecurityContextOptions RunAsUser:*i RunAsGroup:*i RunAsNonRoot:*b SupplementalGroups:[]i SupplementalGroupsPolicy:*s FSGroup:*i FSGroupChangePolicy:*s Sysctls:[]Sysctl SeccompProfile:*SeccompProfile AppArmorProfile:*AppArmorProfile SELinuxChangePolicy:*s
SELinuxOptions: User:s Role:s Type:s Level:s
WindowsSecurityContextOptions: GMSACredentialSpecName:*s GMSACredentialSpec:*s RunAsUserName:*s HostProcess:*b
SeccompProfile: Type:s LocalhostProfile:*s
AppArmorProfile: Type:s LocalhostProfile:*s
Sysctl: Name:s Value:s
LocalObjectReference: Name:s
Affinity: NodeAffinity:*NodeAffinity PodAffinity:*PodAffinity PodAntiAffinity:*PodAffinity
NodeAffinity: RequiredDuringSchedulingIgnoredDuringExecution:*NodeSelector PreferredDuringSchedulingIgnoredDuringExecution:[]PreferredSchedulingTerm
NodeSelector: NodeSelectorTerms:[]NodeSelectorTerm
NodeSelectorTerm: MatchExpressions:[]NodeSelectorRequirement MatchFields:[]NodeSelectorRequirement
NodeSelectorRequirement: Key:s Operator:s Values:[]s
PreferredSchedulingTerm: Weight:i Preference:NodeSelectorTerm
PodAffinity: RequiredDuringSchedulingIgnoredDuringExecution:[]PodAffinityTerm PreferredDuringSchedulingIgnoredDuringExecution:[]WeightedPodAffinityTerm
WeightedPodAffinityTerm: Weight:i PodAffinityTerm:PodAffinityTerm
PodAffinityTerm: LabelSelector:*sel Namespaces:[]s TopologyKey:s NamespaceSelector:*sel MatchLabelKeys:[]s MismatchLabelKeys:[]s
Toleration: Key:s Operator:s Value:s Effect:s TolerationSeconds:*i
HostAlias: IP:s Hostnames:[]s
PodDNSConfig: Nameservers:[]s Searches:[]s Options:[]PodDNSConfigOption
PodDNSConfigOption: Name:s Value:*s
PodReadinessGate: ConditionType:s
TopologySpreadConstraint: MaxSkew:i TopologyKey:s WhenUnsatisfiable:s LabelSelector:*sel MinDomains:*i NodeAffinityPolicy:*s NodeTaintsPolicy:*s MatchLabelKeys:[]s
PodOS: Name:s
PodSchedulingGate: Name:s
PodResourceClaim: Name:s ResourceClaimName:*s ResourceClaimTemplateName:*s
PodSchedulingGroup: PodGroupName:*s
CSINodeDriver: Name:s NodeID:s TopologyKeys:[]s Allocatable:*VolumeNodeResources
VolumeNodeResources: Count:*i
";
