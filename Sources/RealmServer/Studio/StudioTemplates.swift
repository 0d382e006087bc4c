import Mustache

/// Studio's pages as Mustache templates, compiled into the binary (nothing to install beside it).
/// `{{name}}` escapes for HTML (``HTMLPage/escape(_:)``, scalar by scalar: Mustache's own escapes
/// by `Character`, and lets a quote with a combining mark through); `{{{body}}}` is only ever a
/// page already rendered from these.
enum StudioTemplates {
    static func library() throws -> MustacheLibrary {
        MustacheContentTypes.register(Escaped(), named: Escaped.name)
        var library = MustacheLibrary()
        for (name, text) in templates {
            try library.register("{{% CONTENT_TYPE: \(Escaped.name)}}" + text, named: name)
        }
        return library
    }

    struct Escaped: MustacheContentType {
        static let name = "STUDIO_HTML"
        func escapeText(_ text: String) -> String { HTMLPage.escape(text) }
    }

    static let templates: [(String, String)] = [
        ("layout", layout), ("message", message), ("login", login), ("pager", pager), ("realms", realms),
        ("realm", realm), ("objects", objects), ("object", object), ("cell", cell), ("history", history),
        ("sync", sync), ("users", users), ("permissions", permissions), ("logs", logs),
        ("roles", roles),
    ]

    static let layout = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>{{title}} · Realm Studio</title>
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <link rel="stylesheet" href="assets/studio.css"><script src="assets/studio.js" defer></script></head>
        <body{{#live}} data-live="{{live}}" data-delay="{{delay}}"{{/live}}
        {{#canonical}} data-page="{{canonical}}"{{/canonical}}>
        <header><a class="brand" href="realms">Realm Studio</a>
        {{#session}}<nav><a href="realms">Realms</a>{{#isAdmin}} <a href="sync">Sync</a> <a href="users">Users</a>
        <a href="permissions">Permissions</a> <a href="logs">Logs</a>{{/isAdmin}}</nav>
        {{#live}}<span id="live">connecting…</span>{{/live}}
        <form class="logout" method="post" action="logout"><span class="who" id="who">
        {{name}}{{#isAdmin}} (admin){{/isAdmin}}</span>
        <input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" id="logout">Log out</button></form>
        {{/session}}
        </header>
        <main>
        <h1>{{title}}</h1>
        {{#notice}}<p class="notice" role="status" id="notice">{{notice}}</p>{{/notice}}
        {{#error}}<p class="error" role="alert" id="error">{{error}}</p>{{/error}}
        {{{body}}}
        </main></body></html>

        """

    static let message = """
        <p class="error" role="alert" id="error">{{message}}</p>
        <p><a href="realms">Back to the Realms</a></p>
        """

    static let login = """
        <form method="post" action="login" id="login">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <p><label>User name<br><input name="name" id="name" autocomplete="username" required autofocus></label></p>
        <p><label>Password<br>
        <input type="password" name="password" id="password" autocomplete="current-password" required></label></p>
        <p><button type="submit">Log in</button></p>
        </form>
        """

    static let pager = """
        {{#pager}}<nav class="pager">{{#previous}}<a href="{{previous}}" rel="prev">← Previous</a>{{/previous}}
        <span>Page {{page}} of {{pages}}</span>{{#next}}<a href="{{next}}" rel="next" id="next">Next →</a>
        {{/next}}</nav>{{/pager}}
        """

    static let realms = """
        <form method="get" action="realms" class="search">
        <input type="search" name="q" id="q" value="{{q}}" placeholder="Path contains…" aria-label="Search by path">
        <button type="submit">Search</button></form>
        <p class="muted" id="total">
        {{total}} Realm{{plural}}{{#searched}} whose path contains “{{q}}”{{/searched}}.</p>
        {{^none}}<table id="realms"><thead><tr><th>Path</th><th>Version</th><th>Objects</th><th>By type</th>
        <th>Last change</th><th>Origin</th></tr></thead><tbody>
        {{#realms}}<tr><td><a href="{{realmLink}}">{{path}}</a></td><td>{{version}}</td><td>{{objects}}</td>
        <td class="muted">{{types}}</td><td>{{changedAt}}</td><td>{{origin}}</td></tr>
        {{/realms}}</tbody></table>{{/none}}
        {{> pager}}
        """

    static let realm = """
        <p class="crumbs"><a href="realms">Realms</a> › {{path}} · version {{version}}{{#changedAt}}, last changed
        {{changedAt}} by {{origin}}{{/changedAt}} · <a href="{{history}}" id="history">History</a></p>
        {{#noTypes}}<p>This Realm has no types yet.</p>{{/noTypes}}
        {{^noTypes}}<table id="types"><thead><tr><th>Type</th><th>Objects</th><th>Properties</th></tr></thead><tbody>
        {{#types}}<tr><td><a href="{{objectsLink}}">{{typeName}}</a></td><td>{{count}}</td><td>
        {{#properties}}<span class="property">
        {{#primary}}<strong>{{/primary}}{{property}}{{#primary}}</strong>{{/primary}}:
        {{propertyType}}{{#indexed}} (indexed){{/indexed}}
        </span><br>{{/properties}}</td></tr>
        {{/types}}</tbody></table>{{/noTypes}}
        {{#manages}}<p><a href="{{rolesLink}}" id="roles">Roles and privileges</a> (fine-grained permissions)</p>
        {{/manages}}
        <p id="models">Model definitions: {{#models}}<a href="{{modelsLink}}" download>{{language}}</a> {{/models}}</p>
        {{#manages}}<h2>Add a type</h2>
        <form method="post" action="add-type" id="add-type"><input type="hidden" name="csrf" value="{{csrf}}">
        <input type="hidden" name="path" value="{{path}}">
        <input name="name" placeholder="Type name" aria-label="Type name" required>
        <input name="primaryKey" placeholder="Primary key (optional)" aria-label="Primary key">
        <select name="keyType" aria-label="Primary key type"><option>int</option><option>string</option>
        <option>uuid</option><option>objectId</option></select> <button type="submit">Add the type</button></form>
        {{^noTypes}}<h2>Add a property</h2>
        <form method="post" action="add-property" id="add-property"><input type="hidden" name="csrf" value="{{csrf}}">
        <input type="hidden" name="path" value="{{path}}">
        <select name="type" aria-label="Type">{{#typeNames}}<option>{{.}}</option>{{/typeNames}}</select>
        <input name="name" placeholder="Property name" aria-label="Property name" required>
        <input name="propertyType" placeholder="int, string?, Item, Item[], date?…" aria-label="Property type"
        required>
        <label><input type="checkbox" name="indexed" value="1"> indexed</label>
        <button type="submit">Add the property</button></form>{{/noTypes}}{{/manages}}
        """

    /// One line: a value's cell keeps its white space (`pre-wrap`), so the template adds none.
    static let cell = """
        {{#isNull}}<span class="null">null</span>{{/isNull}}{{#isList}}<details><summary>{{count}} item(s)</summary>\
        {{#items}}{{#target}}<a href="{{target}}">{{text}}</a>{{/target}}{{^target}}{{text}}{{/target}}<br>{{/items}}\
        </details>{{/isList}}{{^isNull}}{{^isList}}{{#target}}<a href="{{target}}">{{text}}</a>{{/target}}\
        {{^target}}{{text}}{{/target}}{{/isList}}{{/isNull}}
        """

    static let objects = """
        <p class="crumbs"><a href="realms">Realms</a> › <a href="{{realm}}">{{path}}</a> › {{type}}</p>
        <form method="get" action="objects" class="query">
        <input type="hidden" name="path" value="{{path}}"><input type="hidden" name="type" value="{{type}}">
        <input class="query" name="q" id="q" value="{{q}}"
        placeholder="A query: name BEGINSWITH &quot;A&quot; AND id > 3"
        aria-label="Query">
        <button type="submit">Filter</button></form>
        {{#queryError}}<div class="error" role="alert" id="query-error">{{queryError}}
        {{#caret}}<pre class="caret">{{q}}
        {{caret}}</pre>{{/caret}}</div>{{/queryError}}
        <p class="muted" id="total">{{total}} object{{plural}}.</p>
        {{^none}}<table id="objects"><thead><tr><th>Key</th>{{#columns}}<th>{{#sortable}}<a href="{{sortLink}}">
        {{column}}</a>
        {{/sortable}}{{^sortable}}{{column}}{{/sortable}} <span class="muted">{{columnType}}</span> {{sorted}}</th>
        {{/columns}}</tr>
        </thead><tbody>
        {{#rows}}<tr><td><a href="{{objectLink}}" class="key">{{key}}</a></td>
        {{#cells}}<td class="value">{{> cell}}</td>{{/cells}}</tr>
        {{/rows}}</tbody></table>{{/none}}
        {{> pager}}
        {{#writable}}<h2>Add a {{type}}</h2>
        {{#addError}}<p class="error" role="alert" id="add-error">{{addError}}</p>{{/addError}}
        <form method="post" action="add-object" id="add-object"><input type="hidden" name="csrf" value="{{csrf}}">
        <input type="hidden" name="path" value="{{path}}"><input type="hidden" name="type" value="{{type}}">
        {{#fields}}<label>{{label}} <span class="muted">{{fieldType}}</span>
        <input name="{{field}}" value="{{given}}" aria-label="{{label}}"></label> {{/fields}}
        <button type="submit">Add</button></form>{{/writable}}
        """

    static let object = """
        <p class="crumbs"><a href="realms">Realms</a> › <a href="{{realm}}">{{path}}</a> ›
        <a href="{{objects}}">{{type}}</a> › {{shownKey}}</p>
        <table id="object"><thead><tr><th>Property</th><th>Value</th>{{#writable}}<th>Change</th>{{/writable}}</tr>
        </thead>
        <tbody>
        {{#properties}}<tr id="property-{{property}}"><td>{{property}} <span class="muted">{{propertyType}}</span></td>
        <td class="value">{{> cell}}</td>
        {{#writable}}<td>{{#editable}}<form method="post" action="object" class="inline edit">
        <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="path" value="{{path}}">
        <input type="hidden" name="type" value="{{type}}"><input type="hidden" name="key" value="{{key}}">
        <input type="hidden" name="property" value="{{property}}">
        <input name="value" value="{{current}}" aria-label="New value of {{property}}">
        {{#optional}}<label><input type="checkbox" name="null" value="1"{{#isNull}} checked{{/isNull}}> null</label>
        {{/optional}}
        <button type="submit">Save</button></form>{{/editable}}</td>{{/writable}}</tr>
        {{/properties}}</tbody></table>
        {{#writable}}<form method="post" action="delete" id="delete">
        <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="path" value="{{path}}">
        <input type="hidden" name="type" value="{{type}}"><input type="hidden" name="key" value="{{key}}">
        <button type="submit">Delete this {{type}}</button></form>{{/writable}}
        {{#hasACL}}<h2>Permissions on this {{type}}</h2>
        {{#noACLHolders}}<p class="muted" id="acl">No role holds a privilege on it: only admins see it.</p>
        {{/noACLHolders}}{{^noACLHolders}}<table id="acl"><thead><tr><th>Role</th><th>Privileges</th></tr></thead>
        <tbody>{{#aclHolders}}<tr><td>{{holder}}</td><td>{{privileges}}</td></tr>{{/aclHolders}}</tbody></table>
        {{/noACLHolders}}
        {{#aclEditable}}<form method="post" action="object-permissions" id="acl-form">
        <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="path" value="{{path}}">
        <input type="hidden" name="type" value="{{type}}"><input type="hidden" name="key" value="{{key}}">
        <input name="role" placeholder="Role (everyone, __User:<id>, …)" aria-label="Role" required>
        <input name="privileges" placeholder="{{privilegeNames}}" aria-label="Privileges" required>
        <button type="submit" name="action" value="grant">Grant</button>
        <button type="submit" name="action" value="revoke">Revoke</button></form>{{/aclEditable}}{{/hasACL}}
        """

    static let sync = """
        {{#noDatabase}}<p>This server runs without a <code>database</code> section, so it knows nothing of sync:
        run it with the daemon's configuration (<code>serve --config</code> the same file, or
        <code>run --serve</code>).</p>
        {{/noDatabase}}{{^noDatabase}}
        <p class="crumbs">Adapter {{adapter}} · store {{engine}} · database {{database}}</p>
        {{#blocked}}<div class="blocked" id="blocked"><p>
        <strong>Blocked:</strong> {{path}} version {{version}} was rejected by
        the database: {{error}}</p><p>Fix the database and start <code>realm-adapter run</code> again (it retries), or
        move it aside (stop the daemon first):</p>
        <form method="post" action="dead-letter"><input type="hidden" name="csrf" value="{{csrf}}">
        <input type="hidden" name="path" value="{{path}}"><input type="hidden" name="version" value="{{version}}">
        <button type="submit" class="dead-letter">Move version {{version}} to the dead letters</button></form></div>
        {{/blocked}}
        {{#blockedRow}}<p class="error"><strong>Blocked:</strong> a database change no Realm can hold stopped the daemon
        at {{position}}: {{error}}</p>{{/blockedRow}}
        {{#warnings}}<p class="error">{{.}}</p>{{/warnings}}
        <h2>Realms</h2>
        <p class="muted" id="lag">{{realmCount}} Realm(s) followed, {{behind}} with changes to send{{#partial}}
        (listed, worst first; the others are caught up){{/partial}}.</p>
        <table id="sync-realms"><thead><tr><th>Realm</th><th>Version</th><th>Unsent</th><th>Database recorded</th>
        <th>Last position applied</th></tr></thead><tbody>
        {{#realms}}<tr><td><a href="{{realmLink}}">{{path}}</a></td><td>{{version}}</td><td>{{unsent}}</td>
        <td>{{recorded}}</td><td>{{position}}</td></tr>
        {{/realms}}</tbody></table>
        <h2>Change stream</h2>
        {{#stream}}<p>{{.}}</p>{{/stream}}
        <h2>Set aside</h2>
        <p id="dead-letters">{{deadLetters}} transaction(s) in realm_adapter_dead_letter, {{deadRows}} row change(s)
        in realm_adapter_dead_row{{#olderSetAside}} (the newest {{listed}} of each below; the tables keep them
        all){{/olderSetAside}}.</p>
        {{#hasDeadLetters}}<table id="dead-letter-list"><thead><tr><th>Realm</th><th>Version</th><th>Set aside</th>
        <th>Database's error</th><th>Instructions</th></tr></thead><tbody>
        {{#deadLetterList}}<tr><td><a href="{{history}}">{{path}}</a></td><td>{{version}}</td><td>{{failedAt}}</td>
        <td>{{error}}</td><td><details><summary>JSON</summary><pre>{{content}}</pre></details></td></tr>
        {{/deadLetterList}}</tbody></table>{{/hasDeadLetters}}
        {{#hasDeadRows}}<table id="dead-row-list"><thead><tr><th>Table</th><th>Position</th><th>Set aside</th>
        <th>Why no Realm could hold it</th><th>Row</th></tr></thead><tbody>
        {{#deadRowList}}<tr><td>{{table}}</td><td>{{position}}</td><td>{{failedAt}}</td><td>{{error}}</td>
        <td><details><summary>JSON</summary><pre>{{content}}</pre></details></td></tr>
        {{/deadRowList}}</tbody></table>{{/hasDeadRows}}
        {{#webhooks}}<h2>Webhook {{name}}</h2><p>{{pending}} transaction(s) to deliver in {{realms}} Realm(s), the
        oldest committed {{oldest}}; {{deadLetterCount}} dead letter(s).</p>
        {{#deadLetters}}<p class="muted">{{path}} version {{version}} after {{attempts}} attempts: {{error}}</p>
        {{/deadLetters}}
        {{/webhooks}}
        {{/noDatabase}}
        """

    static let users = """
        <form method="get" action="users" class="search">
        <input type="search" name="q" value="{{q}}" placeholder="Name contains…" aria-label="Search by name">
        <button type="submit">Search</button></form>
        <p class="muted">{{total}} user(s).</p>
        <table id="users"><thead><tr><th>Name</th><th>Id</th><th>Provider</th><th>Admin</th><th>Password</th>
        <th></th></tr></thead><tbody>
        {{#users}}<tr id="user-{{name}}"><td>{{name}}</td><td><a href="{{home}}" class="muted">{{id}}</a></td>
        <td>{{provider}}</td>
        <td>{{#isAdmin}}admin{{/isAdmin}}{{^isSelf}}<form method="post" action="set-admin" class="inline">
        <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="name" value="{{name}}">
        {{^isAdmin}}<input type="hidden" name="admin" value="1">
        <button type="submit" class="make-admin">Make admin</button>
        {{/isAdmin}}{{#isAdmin}}<button type="submit" class="unmake-admin">Remove admin</button>{{/isAdmin}}</form>
        {{/isSelf}}</td>
        <td>{{#hasPassword}}<form method="post" action="set-password" class="inline">
        <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="name" value="{{name}}">
        <input type="password" name="password" minlength="8" required autocomplete="new-password"
        aria-label="New password for {{name}}"><button type="submit">Set</button></form>{{/hasPassword}}</td>
        <td>{{^isSelf}}<form method="post" action="remove-user" class="inline">
        <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="name" value="{{name}}">
        <button type="submit" class="remove">Remove</button></form>{{/isSelf}}</td></tr>
        {{/users}}</tbody></table>
        {{> pager}}
        <h2>Add a user</h2>
        <form method="post" action="add-user" id="add-user"><input type="hidden" name="csrf" value="{{csrf}}">
        <input name="name" placeholder="Name" aria-label="Name" required>
        <input type="password" name="password" placeholder="Password (8 to 72 bytes)" aria-label="Password"
        minlength="8" required autocomplete="new-password">
        <label><input type="checkbox" name="admin" value="1"> admin</label> <button type="submit">Add</button></form>
        """

    static let permissions = """
        <form method="get" action="permissions" class="search">
        <input type="search" name="path" value="{{path}}" placeholder="A Realm's path" aria-label="Path">
        <button type="submit">Show</button></form>
        <p class="muted">{{total}} grant(s){{#filtered}} on {{path}}{{/filtered}}.</p>
        <table id="grants"><thead><tr><th>Path</th><th>User</th><th>Level</th><th></th></tr></thead><tbody>
        {{#grants}}<tr><td><a href="{{realmLink}}">{{path}}</a></td><td>{{user}}</td><td>{{level}}</td>
        <td><form method="post" action="permissions" class="inline"><input type="hidden" name="csrf" value="{{csrf}}">
        <input type="hidden" name="path" value="{{path}}"><input type="hidden" name="user" value="{{userName}}">
        <input type="hidden" name="level" value="none"><button type="submit" class="revoke">Revoke</button></form>
        </td></tr>
        {{/grants}}</tbody></table>
        {{> pager}}
        <h2>Grant</h2>
        <form method="post" action="permissions" id="grant"><input type="hidden" name="csrf" value="{{csrf}}">
        <input name="path" placeholder="/path" aria-label="Path" required>
        <input name="user" placeholder="User name (empty: everyone)" aria-label="User">
        <select name="level" aria-label="Level"><option>read</option><option>write</option><option>manage</option>
        <option>none</option></select> <button type="submit">Grant</button></form>
        """

    static let logs = """
        <form method="get" action="logs" class="search"><label>At least
        <select name="level" aria-label="Level">{{#levels}}<option{{#selected}} selected{{/selected}}>{{name}}</option>
        {{/levels}}</select></label> <button type="submit">Show</button></form>
        <p class="muted">This server process's latest lines, newest first (kept in memory).</p>
        {{#none}}<p>Nothing at this level yet.</p>{{/none}}
        {{^none}}<table id="logs"><thead><tr><th>Time</th><th>Level</th><th>Message</th><th>Details</th></tr></thead>
        <tbody>
        {{#lines}}<tr class="log-{{level}}"><td>{{time}}</td><td>{{level}}</td><td>{{message}}</td>
        <td class="muted">{{label}} {{metadata}}</td></tr>
        {{/lines}}</tbody></table>{{/none}}
        """

    static let roles = """
        <p class="crumbs"><a href="realms">Realms</a> › <a href="{{realm}}">{{path}}</a> › Roles and privileges</p>
        {{^enabled}}<p>This Realm has no fine-grained permissions: everyone who may read it by its path reads all of
        it. Adding a role gives it the permission metadata, everyone keeping every privilege until lowered.</p>
        {{/enabled}}
        <h2>Roles</h2>
        <table id="roles"><thead><tr><th>Role</th><th>Members</th><th></th></tr></thead><tbody>
        {{#roles}}<tr><td>{{role}}</td><td>{{members}}</td>
        <td>{{#removable}}<form method="post" action="roles" class="inline">
        <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="path" value="{{path}}">
        <input type="hidden" name="role" value="{{role}}"><input type="hidden" name="action" value="remove-role">
        <button type="submit">Remove</button></form>{{/removable}}</td></tr>
        {{/roles}}</tbody></table>
        <form method="post" action="roles" id="role-form"><input type="hidden" name="csrf" value="{{csrf}}">
        <input type="hidden" name="path" value="{{path}}">
        <input name="role" placeholder="Role" aria-label="Role" required>
        <input name="user" placeholder="User name (for members)" aria-label="User">
        <button type="submit" name="action" value="add-role">Add the role</button>
        <button type="submit" name="action" value="add-member">Add the member</button>
        <button type="submit" name="action" value="remove-member">Remove the member</button></form>
        <h2>Privileges</h2>
        <table id="privileges"><thead><tr><th>On</th><th>Role: privileges</th></tr></thead><tbody>
        {{#grants}}<tr><td>{{target}}</td><td>{{#holders}}{{holder}}: {{privileges}}<br>{{/holders}}</td></tr>
        {{/grants}}</tbody></table>
        <form method="post" action="roles" id="privilege-form"><input type="hidden" name="csrf" value="{{csrf}}">
        <input type="hidden" name="path" value="{{path}}">
        <input name="role" placeholder="Role (everyone, __User:<id>, …)" aria-label="Role" required>
        <select name="target" aria-label="On"><option value="">the Realm</option>{{#targets}}<option>{{.}}</option>
        {{/targets}}</select>
        <input name="privileges" placeholder="{{privilegeNames}}" aria-label="Privileges" required>
        <button type="submit" name="action" value="grant">Grant</button>
        <button type="submit" name="action" value="revoke">Revoke</button></form>
        """

    static let history = """
        <p class="crumbs"><a href="realms">Realms</a> › <a href="{{realm}}">{{path}}</a> › History</p>
        {{#compacted}}<p class="muted">History up to version {{compacted}} was compacted.</p>{{/compacted}}
        {{#none}}<p>No transactions are kept.</p>{{/none}}
        {{^none}}<table id="history"><thead><tr><th>Version</th><th>Origin</th><th>Committed</th>
        <th>Source position</th>
        <th>Instructions</th></tr></thead><tbody>
        {{#rows}}<tr><td>{{version}}</td><td>{{origin}}</td><td>{{time}}</td><td>{{position}}</td>
        <td><pre class="instructions">{{instructions}}</pre>{{#more}}<span class="muted">and {{more}} more</span>
        {{/more}}</td></tr>
        {{/rows}}</tbody></table>{{/none}}
        {{> pager}}
        """
}
