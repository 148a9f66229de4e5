; Inno Setup script: installs the PyInstaller one-folder build and registers the file associations.
; Build first:  pyinstaller --noconfirm packaging\pyinstaller\ztviewer.spec
; Then:         iscc packaging\windows\ztviewer.iss
#define AppName "ztviewer"
#define AppVersion "0.1.0"
#define DistDir "..\..\dist\ztviewer"

[Setup]
AppId={{7B0E7C3D-3C1D-4B8E-9B0A-5A2F1E2D9C41}
AppName={#AppName}
AppVersion={#AppVersion}
AppPublisher=ztviewer developers
DefaultDirName={autopf}\{#AppName}
DefaultGroupName={#AppName}
OutputBaseFilename=ztviewer-{#AppVersion}-setup
ChangesAssociations=yes
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesInstallIn64BitMode=x64compatible
Compression=lzma2
SolidCompression=yes

[Files]
Source: "{#DistDir}\*"; DestDir: "{app}"; Flags: recursesubdirs createallsubdirs ignoreversion

[Icons]
Name: "{group}\{#AppName}"; Filename: "{app}\ztviewer.exe"
Name: "{group}\Uninstall {#AppName}"; Filename: "{uninstallexe}"

[Registry]
; One ProgID per format; each extension points at its ProgID.
Root: HKA; Subkey: "Software\Classes\.zt"; ValueType: string; ValueName: ""; ValueData: "ztviewer.ztensor"; Flags: uninsdeletevalue
Root: HKA; Subkey: "Software\Classes\.zt"; ValueType: string; ValueName: "Content Type"; ValueData: "application/x-ztensor"
Root: HKA; Subkey: "Software\Classes\ztviewer.ztensor"; ValueType: string; ValueName: ""; ValueData: "zTensor file"; Flags: uninsdeletekey
Root: HKA; Subkey: "Software\Classes\ztviewer.ztensor\DefaultIcon"; ValueType: string; ValueName: ""; ValueData: "{app}\ztviewer.exe,0"
Root: HKA; Subkey: "Software\Classes\ztviewer.ztensor\shell\open\command"; ValueType: string; ValueName: ""; ValueData: """{app}\ztviewer.exe"" ""%1"""

Root: HKA; Subkey: "Software\Classes\.safetensors"; ValueType: string; ValueName: ""; ValueData: "ztviewer.safetensors"; Flags: uninsdeletevalue
Root: HKA; Subkey: "Software\Classes\.safetensors"; ValueType: string; ValueName: "Content Type"; ValueData: "application/x-safetensors"
Root: HKA; Subkey: "Software\Classes\ztviewer.safetensors"; ValueType: string; ValueName: ""; ValueData: "safetensors file"; Flags: uninsdeletekey
Root: HKA; Subkey: "Software\Classes\ztviewer.safetensors\DefaultIcon"; ValueType: string; ValueName: ""; ValueData: "{app}\ztviewer.exe,0"
Root: HKA; Subkey: "Software\Classes\ztviewer.safetensors\shell\open\command"; ValueType: string; ValueName: ""; ValueData: """{app}\ztviewer.exe"" ""%1"""

Root: HKA; Subkey: "Software\Classes\.blz"; ValueType: string; ValueName: ""; ValueData: "ztviewer.blz"; Flags: uninsdeletevalue
Root: HKA; Subkey: "Software\Classes\.blz"; ValueType: string; ValueName: "Content Type"; ValueData: "application/x-blz-tensor-train"
Root: HKA; Subkey: "Software\Classes\ztviewer.blz"; ValueType: string; ValueName: ""; ValueData: "BLZ tensor-train file"; Flags: uninsdeletekey
Root: HKA; Subkey: "Software\Classes\ztviewer.blz\DefaultIcon"; ValueType: string; ValueName: ""; ValueData: "{app}\ztviewer.exe,0"
Root: HKA; Subkey: "Software\Classes\ztviewer.blz\shell\open\command"; ValueType: string; ValueName: ""; ValueData: """{app}\ztviewer.exe"" ""%1"""

[Run]
Filename: "{app}\ztviewer.exe"; Description: "Launch {#AppName}"; Flags: nowait postinstall skipifsilent
