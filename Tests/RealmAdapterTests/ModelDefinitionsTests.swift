import Testing

@testable import RealmAdapter

/// A schema as model classes (`realm schema --models`, Studio): every kind of property, in each
/// language, as that language's Realm SDK declares it.
@Suite struct ModelDefinitionsTests {
    static let schema = try! Schema([
        ObjectSchema(
            name: "Task", primaryKey: "id",
            properties: [
                Property(name: "id", type: .scalar(.int)),
                Property(name: "title", type: .scalar(.string), isIndexed: true),
                Property(name: "due", type: .scalar(.date), isOptional: true),
                Property(name: "cost", type: .scalar(.decimal)),
                Property(name: "owner", type: .link("Person")),
                Property(name: "watchers", type: .list(.link("Person"))),
                Property(name: "tags", type: .list(.scalar(.string))),
            ]),
        ObjectSchema(
            name: "Person", primaryKey: "name",
            properties: [
                Property(name: "name", type: .scalar(.string)),
                Property(name: "tasks", type: .linkingObjects(objectType: "Task", property: "owner")),
            ]),
    ])

    func lines(_ language: ModelLanguage) -> [String] {
        Self.schema.modelDefinitions(language).split(separator: "\n").map {
            $0.trimmingCharacters(in: .whitespaces)
        }
    }

    @Test func swift() {
        let l = lines(.swift)
        for expected in [
            "class Task: Object {", "@Persisted(primaryKey: true) var id: Int",
            "@Persisted(indexed: true) var title: String",
            "@Persisted var due: Date?", "@Persisted var cost: Decimal128", "@Persisted var owner: Person?",
            "@Persisted var watchers: List<Person>", "@Persisted var tags: List<String>",
            "@Persisted(originProperty: \"owner\") var tasks: LinkingObjects<Task>",
        ] {
            #expect(l.contains(expected), "\(expected)")
        }
    }

    @Test func kotlin() {
        let l = lines(.kotlin)
        for expected in [
            "class Task : RealmObject {", "@PrimaryKey", "var id: Long = 0", "@Index", "var title: String = \"\"",
            "var due: RealmInstant? = null", "var owner: Person? = null",
            "var watchers: RealmList<Person> = realmListOf()",
            "val tasks: RealmResults<Task> by backlinks(Task::owner)",
        ] {
            #expect(l.contains(expected), "\(expected)")
        }
    }

    @Test func java() {
        let l = lines(.java)
        for expected in [
            "public class Task extends RealmObject {", "private long id;", "private Date due;", "@Required",
            "private org.bson.types.Decimal128 cost;", "private RealmList<Person> watchers;",
            "@LinkingObjects(\"owner\")", "private final RealmResults<Task> tasks = null;",
            "public long getId() { return id; }", "public void setId(long id) { this.id = id; }",
        ] {
            #expect(l.contains(expected), "\(expected)")
        }
        #expect(!l.contains { $0.hasPrefix("public void setTasks") }, "backlinks are read-only")
    }

    @Test func typeScriptAndJavaScript() {
        let ts = lines(.typescript)
        for expected in [
            "export class Task extends Realm.Object<Task> {", "id!: number;", "due!: Date | null;",
            "watchers!: Realm.List<Person>;", "tasks!: Realm.Results<Task>;", "primaryKey: \"id\",",
            "\"title\": { type: \"string\", indexed: true },",
            "\"tasks\": { type: \"linkingObjects\", objectType: \"Task\", property: \"owner\" },",
        ] {
            #expect(ts.contains(expected), "\(expected)")
        }
        let js = lines(.javascript)
        #expect(js.contains("export class Person extends Realm.Object {") && js.contains("\"due\": \"date?\","))
    }
}
